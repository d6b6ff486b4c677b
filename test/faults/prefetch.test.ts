// Nothing waits without a reason. A job that a killed worker had fetched into its local queue (it never took the
// chat's lease) runs again within seconds on another worker, not after a lease length; chat_private.job_queue counts
// each job once, showing the dead worker's jobs apart; and a structured request queued behind a turn that puts the
// chat in `error` gets its failed receipt at once. Real worker processes, scripted model.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, receipts, sendMessage, setStructuredExperiment, structured, text } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { fastSettings, makeWorkspaces, spawnWorkerProcess, statusOf, waitFor, waitForStatus } from "../support/worker.ts";

let db: TestDatabase;
let root: string;
let user: string;
const LEASE_SECONDS = 30;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db, { lease_seconds: LEASE_SECONDS });
  await setStructuredExperiment(db, true);
  root = await makeWorkspaces();
  user = await createUser(db, "quinn");
});
test.after(async () => {
  await db.drop();
});

async function plainChat(script: object[]): Promise<string> {
  return asUser(db, user, async (client) => (await client.query<{ chat_id: string }>(
    "select chat_id from chat_public.create_chat(content => $1, workspace => 'ws')", [text(JSON.stringify({ script }))])).rows[0]!.chat_id);
}

async function jobQueue(): Promise<{ running: number; locked_by_dead_worker: number; failed_permanently: number }> {
  const { rows } = await db.pool.query(
    `select running::int, locked_by_dead_worker::int, failed_permanently::int from chat_private.job_queue where task_identifier = 'chat_run'`);
  return rows[0] ?? { running: 0, locked_by_dead_worker: 0, failed_permanently: 0 };
}

test("a killed worker's prefetched job runs again within seconds, not after a lease length; job_queue shows it apart", async () => {
  // Both jobs exist before the worker starts, so its first fetch takes both into its local queue (size
  // concurrency + 1 = 2): it runs `busy` (a minute-long step) and holds `prefetched` without its lease.
  const busy = await plainChat([{ text: "slow", delay_ms: 60_000 }]);
  const prefetched = await plainChat([{ text: "prefetched and rescued" }]);
  const doomed = spawnWorkerProcess(db, root, { CHATD_TEST_CONCURRENCY: "1" });
  let rescuer: ReturnType<typeof spawnWorkerProcess> | undefined;
  try {
    await waitFor("the busy chat's lease and the prefetched chat's locked job", async () => {
      const { rows } = await db.pool.query<{ busy: boolean; locked: boolean; leased: boolean }>(
        `select exists (select 1 from chat_private.chat_leases where chat_id = $1::uuid) as busy,
                exists (select 1 from graphile_worker.jobs where key = 'chat:' || $2::text and locked_at is not null) as locked,
                exists (select 1 from chat_private.chat_leases where chat_id = $2::uuid) as leased`, [busy, prefetched]);
      return rows[0]!.busy && rows[0]!.locked && !rows[0]!.leased;
    });
    assert.equal(await jobQueue(), { running: 2, locked_by_dead_worker: 0, failed_permanently: 0 }, "each job counted once");
    doomed.kill("SIGKILL");
    await doomed.exited;
    await waitFor("the dead worker's jobs shown apart", async () => (await jobQueue()).locked_by_dead_worker === 2 || undefined);
    assert.equal(await jobQueue(), { running: 0, locked_by_dead_worker: 2, failed_permanently: 0 });
    const killedAt = Date.now();
    rescuer = spawnWorkerProcess(db, root);
    // Bounded well under the lease: the lease rule would take LEASE_SECONDS.
    await waitForStatus(db, prefetched, "waiting", (LEASE_SECONDS * 1000) / 2);
    console.log(`  prefetched job of a killed worker ran again ${Date.now() - killedAt} ms after the rescuer started`);
    assert.is(await statusOf(db, busy), "running", "the chat whose lease the dead worker holds waits for its lease");
    await waitFor("the dead worker's chat_run jobs removed", async () => (await jobQueue()).locked_by_dead_worker === 0 || undefined);
  } finally {
    doomed.kill("SIGKILL");
    rescuer?.kill("SIGKILL");
    await Promise.all([doomed.exited, rescuer?.exited]);
  }
});

test("a structured request queued behind a turn that puts the chat in error gets a failed receipt at once", async () => {
  // The running turn fails for good after a slow first step (HTTP 400 is not retried): the chat enters error with a
  // structured request queued behind it.
  const chat = await plainChat([{ delay_ms: 1500, tool_calls: [{ name: "list_files", args: { path: "." } }] }, { error_status: 400 }]);
  const worker = spawnWorkerProcess(db, root);
  try {
    await waitFor("the turn to run", async () => (await statusOf(db, chat)) === "running" || undefined);
    const queued = await sendMessage(db, user, chat, JSON.stringify({ script: [{ text: "never runs" }] }), structured());
    assert.ok(queued.queued_message_id != null, "queued behind the running turn");
    await waitForStatus(db, chat, "error");
    const [receipt, ...more] = await receipts(db, chat);
    assert.is(more.length, 0);
    assert.is(receipt?.request_id, queued.structured_output_request_id);
    assert.is(receipt?.status, "failed");
    assert.is(receipt?.code, "generation_failed");
    const { rows } = await db.pool.query("select count(*)::int as n from chat_public.chat_queued_messages where chat_id = $1", [chat]);
    assert.is(rows[0].n, 0, "the request left the queue with its receipt");
  } finally {
    worker.kill("SIGKILL");
    await worker.exited;
  }
});

test.run();
