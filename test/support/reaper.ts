// The clean-up of a test that runs servers of its own (the HA tests' Patroni cluster and PgBouncer, the fault tests'
// private PostgreSQL), in a process of its own: it is told (one line on stdin per process) what the test started
// and, when its stdin ends — the test closed it, or the test process died in any way, SIGKILL included (the test
// runner kills a file that overruns its time) — it ends all of it and removes the test's folder. PostgreSQL's
// postmasters are not children of anything the test started (Patroni and pg_ctl start them in sessions of their
// own), so they are found from the folder's postmaster.pid files (<folder>/data or <folder>/<node>/data), checked
// to be the folder's, and killed with their children.
//   stdin lines: `group <pid>` (kill the process group), `pid <pid>` (kill the process)
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { processAlive } from "../../src/process-alive.ts";

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

/** The postmasters running on data folders under `root` (its own data folder, or one per node), from their
 * postmaster.pid files. */
function postmastersUnder(dir: string): number[] {
  const folders = [dir, ...readdirSync(dir, { withFileTypes: true }).filter((node) => node.isDirectory()).map((node) => join(dir, node.name))];
  const found: number[] = [];
  for (const folder of folders) {
    try {
      const pid = Number(readFileSync(join(folder, "data", "postmaster.pid"), "utf8").split("\n")[0]);
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

export interface Reaper {
  /** Tells the reaper about a process the test started: its process group (`group`) or the process alone. */
  track(kind: "group" | "pid", pid: number): void;
  /** Makes the reaper end everything and remove the folder now; resolves when it has. */
  reap(): Promise<void>;
}

/** Starts the reaper of `root` (a chatd-ha-* or chatd-faults-* folder). Neither it nor the pipe to it keeps the test
 * process alive: it ends when the test ends, and the reaper then does its work. */
export function startReaper(root: string): Reaper {
  const child = spawn(process.execPath, [import.meta.filename, root], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    track: (kind, pid) => child.stdin.write(`${kind} ${pid}\n`),
    async reap() {
      child.ref();
      child.stdin.end();
      await exited;
    },
  };
}

if (process.argv[1]?.endsWith("reaper.ts")) {
  const root = process.argv[2];
  if (root == null || !/chatd-(ha|faults)-/.test(root)) throw new Error("usage: reaper.ts <the test's chatd-ha-* or chatd-faults-* folder>");
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
