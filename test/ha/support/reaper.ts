// The HA test's clean-up, in a process of its own: it is told (one line on stdin per process) what the test started
// and, when its stdin ends — the test closed it, or the test process died in any way, SIGKILL included — it ends
// all of it and removes the test's folder. PostgreSQL's postmasters are not children of anything the test started
// (Patroni starts them in sessions of their own, and each backend calls setsid), so they are found from the
// folder's postmaster.pid files, checked to be the folder's, and killed with their children.
//   stdin lines: `group <pid>` (kill the process group), `pid <pid>` (kill the process)
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { processAlive } from "../../../src/process-alive.ts";

const groups: number[] = [];
const pids: number[] = [];

function kill(target: number): void {
  try {
    process.kill(target, "SIGKILL");
  } catch {
    // gone already
  }
}

/** Processes whose parent is `parent` (a postmaster's backends and auxiliary processes). */
export function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // ended while listed
    }
  }
  return children;
}

/** The postmasters running on data folders under `root`, from their postmaster.pid files. */
function postmastersUnder(dir: string): number[] {
  const found: number[] = [];
  for (const node of readdirSync(dir, { withFileTypes: true })) {
    if (!node.isDirectory()) continue;
    try {
      const pid = Number(readFileSync(join(dir, node.name, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (processAlive(pid) && cmdline.includes(dir)) found.push(pid);
    } catch {
      // no server there, or it is gone
    }
  }
  return found;
}

function reap(root: string): void {
  // Patroni first (a live Patroni would start its PostgreSQL again), then everything else, then the servers.
  for (const group of groups) kill(-group);
  for (const pid of pids) kill(pid);
  try {
    for (const postmaster of postmastersUnder(root)) {
      kill(postmaster);
      for (const child of childrenOf(postmaster)) kill(child);
    }
  } catch {
    // the folder is gone
  }
  rmSync(root, { recursive: true, force: true });
}

if (process.argv[1]?.endsWith("reaper.ts")) {
  const root = process.argv[2];
  if (root == null || !root.includes("chatd-ha-")) throw new Error("usage: reaper.ts <the test's chatd-ha-* folder>");
  createInterface({ input: process.stdin }).on("line", (line) => {
    const [kind, value] = line.split(" ");
    const pid = Number(value);
    if (!Number.isInteger(pid) || pid <= 1) return;
    if (kind === "group") groups.push(pid);
    else if (kind === "pid") pids.push(pid);
  }).on("close", () => {
    reap(root);
    process.exit(0);
  });
}
