// No zombie, whatever stops the job runner (worker/supervision.ts): a real worker process whose runner stops taking
// jobs exits with status 70 for its supervisor, with an event (Graphile Worker shutting its runner down after a
// failed completion batch) or without one (its queue pool never hands out a connection: fault point
// queue_checkout), and its SIGTERM stop still ends. A worker that takes no job only because all its slots are busy,
// or because there is none, lives on.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, text } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { fastSettings, makeWorkspaces, statusOf, waitForStatus } from "../support/worker.ts";
import { spawnFaultWorker, type FaultWorker } from "./support/workers.ts";
import { until } from "./support/load.ts";

let db: TestDatabase;
let root: string;
let user: string;
const STALL_SECONDS = "2";

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  root = await makeWorkspaces();
  user = await createUser(db, "zed");
});
test.after(async () => {
  await db.drop();
});

async function plainChat(script: object[]): Promise<string> {
  return asUser(db, user, async (client) => (await client.query<{ chat_id: string }>(
    "select chat_id from chat_public.create_chat(content => $1, workspace => 'ws')", [text(JSON.stringify({ script }))])).rows[0]!.chat_id);
}

/** The exit code, or "alive" when the process has not exited within the bound (a zombie never does). */
async function exitWithin(worker: FaultWorker, ms: number): Promise<number | "alive"> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"alive">((resolve) => {
    timer = setTimeout(() => resolve("alive"), ms);
  });
  try {
    return await Promise.race([worker.exited, bound]);
  } finally {
    clearTimeout(timer);
  }
}

test("a runner that stops taking jobs without any event: the worker exits 70 once a job waited the stall bound", async () => {
  const worker = spawnFaultWorker(db.url, root, { CHATD_FAULTS: "queue_checkout:hang", CHATD_WORKER_STALL_SECONDS: STALL_SECONDS });
  try {
    await worker.waitForLine(/worker started/);
    const chat = await plainChat([{ text: "never taken" }]);
    assert.is(await exitWithin(worker, 60_000), 70, `exit status 70; ${worker.describe()}`);
    assert.ok(worker.lines.some((line) => line.level === 60 && /took no job/.test(String((line.err as { message?: string })?.message))),
      "a fatal line names the stall");
    assert.is(await statusOf(db, chat), "running", "the job waits for another worker");
  } finally {
    // A stalled runner's stop would wait for it too: this test is not about the stop.
    worker.child.kill("SIGKILL");
    await worker.exited;
  }
});

test("a SIGTERM stop of a worker whose runner stopped taking jobs ends (bounded), leaving its jobs to the sweep", async () => {
  const worker = spawnFaultWorker(db.url, root, { CHATD_FAULTS: "queue_checkout:hang", CHATD_WORKER_STALL_SECONDS: "3600" });
  try {
    await worker.waitForLine(/worker started/);
    worker.child.kill("SIGTERM");
    assert.is(await exitWithin(worker, 60_000), 0, `the stop ends; ${worker.describe()}`);
    assert.ok(worker.lines.some((line) => /did not stop in time/.test(line.msg)), "an error line says the runner did not stop");
  } finally {
    if (worker.alive()) worker.child.kill("SIGKILL");
    await worker.exited;
  }
});

test("a worker with every slot busy, then idle with nothing to run, is not a zombie", async () => {
  const worker = spawnFaultWorker(db.url, root, { CHATD_TEST_CONCURRENCY: "1", CHATD_WORKER_STALL_SECONDS: STALL_SECONDS });
  try {
    await worker.waitForLine(/worker started/);
    // The first chat holds the only slot for more than twice the bound while the second one's job waits.
    const busy = await plainChat([{ text: "slow", delay_ms: 5000 }]);
    const waiting = await plainChat([{ text: "after the slow one" }]);
    await waitForStatus(db, busy, "waiting", 60_000);
    await waitForStatus(db, waiting, "waiting", 60_000);
    // Idle with nothing to run for more than twice the bound: a barrier on the process's own alive reports.
    const reports = async () => (await db.pool.query<{ n: number }>(
      "select count(*)::int as n from chat_private.worker_processes where seen_at > now() - interval '2 seconds'")).rows[0]!.n;
    const idleSince = Date.now();
    await until("two stall bounds of idleness", async () => Date.now() - idleSince > 5000 && (await reports()) > 0);
    assert.ok(worker.alive(), `the worker lives on; ${worker.describe()}`);
  } finally {
    assert.is(await worker.stop(), 0, "a SIGTERM stop exits 0");
  }
});

test("a runner that shuts itself down after a failed completion batch: the worker exits 70 at once", async () => {
  const worker = spawnFaultWorker(db.url, root, { CHATD_WORKER_STALL_SECONDS: "3600" });
  try {
    await worker.waitForLine(/worker started/);
    // A completion refused for a reason of its own (not the connection's): Graphile Worker shuts its runner down.
    await db.pool.query("revoke delete on graphile_worker._private_jobs from chat_worker");
    await plainChat([{ text: "its completion is refused" }]);
    assert.is(await exitWithin(worker, 60_000), 70, `exit status 70; ${worker.describe()}`);
    assert.ok(worker.lines.some((line) => line.level === 60
      && /started shutting down on its own/.test(String((line.err as { message?: string })?.message))), "a fatal line names the shutdown");
  } finally {
    await db.pool.query("grant delete on graphile_worker._private_jobs to chat_worker");
    worker.child.kill("SIGKILL");
    await worker.exited;
  }
});

test.run();
