// Hung steps, with real worker processes: a provider stream that stops sending is aborted by the watchdog and
// handled as a retryable transport error (the turn ends with a receipt instead of holding its chat), and a worker
// wedged inside a step (a fault point that never returns) stops renewing its lease, so another worker takes the chat.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, receipts, setStructuredExperiment, structured, text } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  fastSettings, makeWorkspaces, messages, shape, spawnWorkerProcess, turn, waitFor, waitForStatus,
} from "../support/worker.ts";

let db: TestDatabase;
let root: string;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db, { lease_seconds: 2, retry_max_attempts: 2, stream_idle_timeout_seconds: 1, progress_timeout_seconds: 2 });
  await setStructuredExperiment(db, true);
  root = await makeWorkspaces();
  user = await createUser(db, "hugo");
});
test.after(async () => {
  await db.drop();
});

async function stopProcess(child: ReturnType<typeof spawnWorkerProcess>): Promise<void> {
  child.kill("SIGKILL");
  await child.exited;
}

test("a provider stream that stops sending is aborted after stream_idle_timeout_seconds and retried; the request gets its receipt", async () => {
  // Ten minutes of silence after the first words: only the watchdog ends this attempt (and the retry's).
  const script = JSON.stringify({ script: [{ text: "thinking...", delay_ms: 600_000 }] });
  const chat = await asUser(db, user, async (client) => (await client.query<{ chat_id: string }>(
    "select chat_id from chat_public.create_chat(content => $1, response_format => $2)", [text(script), structured()])).rows[0]!.chat_id);
  const worker = spawnWorkerProcess(db, root);
  try {
    await waitForStatus(db, chat, "error");
    const [receipt] = await receipts(db, chat);
    assert.is(receipt?.status, "failed");
    assert.is(receipt?.code, "generation_failed");
    const rows = await messages(db, chat);
    const step = rows.find((row) => row.role === "assistant");
    assert.is(step?.finish?.error?.kind, "stream_idle_timeout");
    assert.is(step?.finish?.attempts, 2, "the aborted attempt was retried");
    assert.equal(await turn(db, chat), [{ steps: 0, recoveries: 0, finished: true }], "a hung stream is not a crash");
    assert.is(worker.exitCode, null, "the worker lives on");
  } finally {
    await stopProcess(worker);
  }
});

for (const point of ["provider_stream", "during_tool_execution"]) {
  test(`a worker wedged at ${point} stops renewing its lease; another worker takes the chat`, async () => {
    const chat = await asUser(db, user, async (client) => (await client.query<{ chat_id: string }>(
      "select chat_id from chat_public.create_chat(content => $1, workspace => 'ws')", [text(`wedge at ${point}`)])).rows[0]!.chat_id);
    // One slot, which the hang takes: the re-enqueued chat can only go to the healthy worker.
    const wedged = spawnWorkerProcess(db, root, { CHATD_FAULTS: `${point}:hang`, CHATD_TEST_CONCURRENCY: "1" });
    try {
      await waitFor("the wedged worker's lease", async () => (await db.pool.query(
        "select 1 from chat_private.chat_leases where chat_id = $1 and worker_id like $2", [chat, `%:${wedged.pid}:%`])).rowCount === 1);
      const healthy = spawnWorkerProcess(db, root);
      try {
        await waitForStatus(db, chat, "waiting");
        assert.equal(shape(await messages(db, chat)).at(-1), "assistant:text", "the turn finished");
        assert.equal((await turn(db, chat)).map((t) => t.recoveries), [1], "a wedged process counts as a lost one");
        assert.is(wedged.exitCode, null, "the wedged process is still there, holding nothing");
      } finally {
        await stopProcess(healthy);
      }
    } finally {
      await stopProcess(wedged);
    }
  });
}

test.run();
