// What a supervisor (systemd, Docker, `timeout`) relies on: a SIGTERM to the npm process of `npm start` (npm itself,
// not its process group) or a SIGINT to `chatd start` stops the API, the worker and the embedded PostgreSQL, exits 0
// within the shutdown deadline, and logs at most two lines, none of them a warning. The worker is a supervised child:
// killed, it is restarted. Real processes, real signals, a real cluster in a throw-away folder of the project.
import { readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SHUTDOWN_DEADLINE_MS } from "../../src/cli/lifecycle.ts";
import { projectRoot } from "../../src/db/database.ts";
import { startEmbedded } from "../../src/db/embedded.ts";
import { alive, isolatedEnv, launch, type ChatdProcess, type LogLine } from "../support/chatd-process.ts";

const dataDir = join(projectRoot, ".chatd", `test-start-${process.pid}`);

test.after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

const postmasterPid = () => Number(readFileSync(join(dataDir, "cluster", "postmaster.pid"), "utf8").split("\n")[0]);
const isWorkerStarted = (line: LogLine) => line.msg === "worker started";

interface Running { api: string; metrics: string; chatdPid: number; workerPid: number; postgresPid: number }

async function running(chatd: ChatdProcess): Promise<Running> {
  const ready = await chatd.waitFor("chatd is running", (line) => line.msg === "chatd is running");
  const worker = await chatd.waitFor("the worker started", isWorkerStarted);
  return { api: String(ready.url), metrics: String(worker.metrics), chatdPid: ready.pid!, workerPid: worker.pid!, postgresPid: postmasterPid() };
}

/** Sends `signal`, then checks the exit, the time it took, the lines logged meanwhile and what is left. */
async function stopsCleanly(chatd: ChatdProcess, pids: Running, signal: NodeJS.Signals): Promise<void> {
  const before = chatd.lines.length;
  const sent = Date.now();
  chatd.child.kill(signal);
  const exit = await chatd.exited;
  const took = Date.now() - sent;
  assert.equal(exit, { code: 0, signal: null }, `exit 0 after ${signal}`);
  assert.ok(took < SHUTDOWN_DEADLINE_MS, `stopped within the deadline (${took} ms)`);
  const logged = chatd.lines.slice(before);
  // A job that was running when the signal came (the worker's first data_retention run, say) may log its completion
  // meanwhile: Graphile Worker's line for that job, not a line of the shutdown. Warnings count from every line.
  const shutdown = logged.filter((l) => !(l.component === "graphile-worker" && l.job != null));
  assert.ok(shutdown.length <= 2, `at most two shutdown lines:\n${shutdown.map((l) => l.raw).join("\n")}`);
  assert.equal(logged.filter((l) => l.level == null || l.level >= 40).map((l) => l.raw), [], "no warning, error or raw line");
  assert.ok(await refused(pids.api), "nothing listens on the API port");
  assert.ok(await refused(pids.metrics), "nothing listens on the worker's metrics port");
  for (const [name, pid] of [["chatd", pids.chatdPid], ["worker", pids.workerPid], ["postgres", pids.postgresPid]] as const) {
    assert.not.ok(alive(pid), `the ${name} process (${pid}) is gone`);
  }
  assert.throws(() => postmasterPid(), "no postmaster.pid: the cluster was shut down, not left running");
}

test("npm start: a killed worker is restarted; SIGTERM to the npm process stops everything and exits 0", async () => {
  const chatd = launch("npm", ["start"], { cwd: projectRoot, env: isolatedEnv(dataDir) });
  try {
    const first = await running(chatd);
    assert.is.not(first.workerPid, first.chatdPid, "the worker runs in a process of its own");
    process.kill(first.workerPid, "SIGKILL");
    const restarted = await chatd.waitFor("the worker's restart", (line) => isWorkerStarted(line) && line.pid !== first.workerPid);
    // Graphile Worker logs that its runner connected on its own schedule, possibly after "worker started": wait for
    // it, so that the lines counted after SIGTERM are the shutdown's.
    await chatd.waitFor("the restarted worker's job runner", (line) => line.pid === restarted.pid
      && typeof line.msg === "string" && line.msg.startsWith("Worker connected"));
    assert.ok(chatd.lines.some((l) => l.msg === "the worker process exited; restarting it" && l.signal === "SIGKILL"));
    await stopsCleanly(chatd, { ...first, workerPid: restarted.pid!, metrics: String(restarted.metrics) }, "SIGTERM");
  } finally {
    chatd.child.kill("SIGKILL");
  }
});

/** A process's environment variable names, from /proc. */
const environNames = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").map((entry) => entry.split("=")[0]);

test("chatd start run directly: the worker child gets none of the API's secrets; SIGINT stops everything and exits 0", async () => {
  const secrets = { CHATD_JWT_SECRET: "s".repeat(40), CHATD_METRICS_TOKEN: "metrics-token", CHATD_API_PASSWORD: "api-password" };
  const chatd = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "start"], { cwd: projectRoot, env: isolatedEnv(dataDir, secrets) });
  try {
    const pids = await running(chatd);
    assert.ok(environNames(pids.chatdPid).includes("CHATD_JWT_SECRET"), "chatd itself has them");
    const worker = environNames(pids.workerPid);
    assert.equal(Object.keys(secrets).filter((name) => worker.includes(name)), [], "the worker has none of them");
    assert.ok(worker.includes("DATABASE_URL"));
    await stopsCleanly(chatd, pids, "SIGINT");
  } finally {
    chatd.child.kill("SIGKILL");
  }
});

test("chatd killed with SIGKILL: its worker child stops by itself; the next chatd adopts the orphaned PostgreSQL", async () => {
  const chatd = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "start"], { cwd: projectRoot, env: isolatedEnv(dataDir) });
  try {
    const pids = await running(chatd);
    process.kill(pids.chatdPid, "SIGKILL");
    // The worker still writes to the stderr it inherited, so its last line reaches this test after its parent died.
    await chatd.waitFor("the worker's own shutdown", (line) => line.msg === "worker stopped" && line.pid === pids.workerPid);
    const adopted = await startEmbedded({ dataDir });
    assert.is(postmasterPid(), pids.postgresPid, "the orphaned server was adopted, not replaced");
    await adopted.stop();
    assert.not.ok(alive(pids.postgresPid), "the adopter stopped the orphaned server");
  } finally {
    chatd.child.kill("SIGKILL");
  }
});

test.run();
