// Races around the end of a structured request, decided with barriers (two connections and row locks, a mock
// provider holding its response), never sleeps: exactly one receipt, and no receipt or notification from a
// transaction that rolled back.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  acquire, blockedOnLock, commitCandidate, connect, createChat, createUser, deleteQueued, interrupt, receipts, sendMessage,
  setStructuredExperiment, structured,
} from "../support/chats.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import {
  addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, setSetting, startTestWorker, waitFor, waitForStatus,
} from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  // The SQL-level races hold leases across several statements; a short lease would expire on a loaded machine.
  await setSetting(db, "lease_seconds", 120);
  await setStructuredExperiment(db, true);
  user = await createUser(db, "racer");
});
test.after(async () => {
  await db.drop();
});

const finishArgs = (f: { chatId: string; runnerId: string; historyVersion: string; generationAttempt: string }) =>
  [f.chatId, f.runnerId, f.historyVersion, f.generationAttempt];

test("a rolled-back terminal transaction leaves no receipt and sends no notification", async () => {
  const chat = await createChat(db, user, "rollback", structured());
  const fence = await commitCandidate(db, await acquire(db, chat.chat_id), '{"n": 1}');
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  const seen: string[] = [];
  listener.on("notification", (n) => seen.push(JSON.parse(n.payload ?? "{}").change as string));
  await listener.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chat.chat_id}`)}`);
  const tx = await connect(db);
  try {
    await tx.client.query("begin");
    await tx.client.query("select chat_private.finish_turn($1, $2, $3, $4)", finishArgs(fence));
    await tx.client.query("rollback");
    assert.equal(await receipts(db, chat.chat_id), []);
    // Barrier: a committed transition's notification; anything from the rolled-back one would arrive before it.
    const marker = new Promise<void>((resolve) => listener.on("notification", () => resolve()));
    await db.pool.query("select chat_private.finish_turn($1, $2, $3, $4)", finishArgs(fence));
    await marker;
    assert.equal(seen, ["turn_finished"]);
    assert.equal((await receipts(db, chat.chat_id)).map((r) => r.status), ["succeeded"]);
  } finally {
    await tx.client.end();
    await listener.end();
  }
});

test("two runners completing the same request: one receipt; the stale one is fenced (CHFNC)", async () => {
  const chat = await createChat(db, user, "two runners", structured());
  const fence = await commitCandidate(db, await acquire(db, chat.chat_id), '{"n": 2}');
  const a = await connect(db);
  const b = await connect(db);
  try {
    await a.client.query("begin");
    await a.client.query("select chat_private.finish_turn($1, $2, $3, $4)", finishArgs(fence));
    // Settled at once so that a failure before the barrier cannot leave an unhandled rejection behind.
    const second = b.client.query("select chat_private.finish_turn($1, $2, $3, $4)", finishArgs(fence)).then(
      () => "succeeded", (error: { code?: string }) => error.code ?? "no code");
    await blockedOnLock(db, b.pid);
    await a.client.query("commit");
    assert.is(await second, "CHFNC");
    assert.equal((await receipts(db, chat.chat_id)).map((r) => r.status), ["succeeded"]);
  } finally {
    await a.client.end();
    await b.client.end();
  }
});

test("interrupt vs finalize: the interrupt commits first, the finalization is refused, one interrupted receipt", async () => {
  const chat = await createChat(db, user, "interrupt first", structured());
  const fence = await acquire(db, chat.chat_id);
  const client = await connect(db, { role: "chat_user", userId: user });
  const runner = await connect(db);
  try {
    await client.client.query("select chat_public.interrupt_chat($1)", [chat.chat_id]);
    const call = { type: "tool-call", tool_call_id: "final-1", tool_name: "coder_structured_output", args: {} };
    const finalize = runner.client.query("select chat_private.commit_step($1, $2, $3, $4, $5, $6)", [...finishArgs(fence),
      JSON.stringify([{ role: "assistant", content: [call] }]), '{"steps": 1, "candidate": {"value": {"n": 3}, "step": 1, "message_index": 0}}'])
      .catch((error: unknown) => error);
    await blockedOnLock(db, runner.pid);
    await client.client.query("commit");
    const refused = await finalize;
    assert.is((refused as { code?: string }).code, "CHTRN", "commit_step is refused while interrupting");
    await db.pool.query("select chat_private.finish_interruption($1, $2, $3, $4)", finishArgs(fence));
    assert.equal((await receipts(db, chat.chat_id)).map((r) => [r.status, r.code]), [["canceled", "interrupted"]]);
  } finally {
    await client.client.end();
    await runner.client.end();
  }
});

test("finalize vs interrupt: a committed candidate then an interrupt still yields exactly one receipt", async () => {
  const chat = await createChat(db, user, "finalize first", structured());
  const fence = await commitCandidate(db, await acquire(db, chat.chat_id), '{"n": 4}');
  await interrupt(db, user, chat.chat_id);
  assert.is(await sqlState(db.pool.query("select chat_private.finish_turn($1, $2, $3, $4)", finishArgs(fence))), "CHTRN");
  await db.pool.query("select chat_private.finish_interruption($1, $2, $3, $4)", finishArgs(fence));
  assert.equal((await receipts(db, chat.chat_id)).map((r) => [r.status, r.code]), [["canceled", "interrupted"]]);
});

test("deleting a queued structured request while an ordinary turn is held (mock provider): the receipt commits at once, the held turn is untouched", async () => {
  const server: MockProviderServer = await startMockProvider();
  await addModelConfig(db, "held", "openai-chat", server.url);
  const worker: RunningWorker = await startTestWorker(db, await makeWorkspaces());
  try {
    const release = barrier();
    const reached = barrier();
    server.enqueue({ text: ["partial ", "answer ", "done"], hold: { afterEvents: 2, release: release.promise, reached: () => reached.resolve() } });
    const chat = await createWorkerChat(db, user, "ordinary turn", { model: "held", workspace: null });
    await reached.promise;
    const before = await db.pool.query<{ history_version: string; generation_attempt: string; snapshot_version: string }>(
      "select history_version, generation_attempt, snapshot_version from chat_public.chats where id = $1", [chat]);
    const queued = await sendMessage(db, user, chat, "later", structured());
    await deleteQueued(db, user, queued.queued_message_id!);
    assert.equal((await receipts(db, chat)).map((r) => [r.request_id, r.code]), [[queued.structured_output_request_id, "queue_deleted"]],
      "the receipt is committed while the provider still holds the turn");
    const after = await db.pool.query<{ history_version: string; generation_attempt: string; snapshot_version: string }>(
      "select history_version, generation_attempt, snapshot_version from chat_public.chats where id = $1", [chat]);
    assert.is(after.rows[0]!.history_version, before.rows[0]!.history_version);
    assert.is(after.rows[0]!.generation_attempt, before.rows[0]!.generation_attempt);
    assert.ok(BigInt(after.rows[0]!.snapshot_version) > BigInt(before.rows[0]!.snapshot_version));
    release.resolve();
    await waitForStatus(db, chat, "waiting");
    const { rows } = await db.pool.query<{ text: string }>(
      "select content -> 0 ->> 'text' as text from chat_public.chat_messages where chat_id = $1 and role = 'assistant' and kind = 'message'", [chat]);
    assert.equal(rows.map((r) => r.text), ["partial answer done"], "the held step committed once, with no repeated effect");
    assert.is(server.requests.length, 1, "the provider was not called again");
  } finally {
    await worker.stop();
    await server.close();
  }
});

test("nothing is stranded: 20 queued structured requests, one exhausting its repairs, all end", async () => {
  const worker: RunningWorker = await startTestWorker(db, await makeWorkspaces());
  try {
    const script = (steps: object[]) => JSON.stringify({ script: steps });
    const ok = (n: number) => script([{ tool_calls: [{ name: "coder_structured_output", args: { output: { n } } }] }]);
    const first = await createWorkerChat(db, user, ok(0), { responseFormat: structured(), workspace: null });
    for (let i = 1; i < 20; i++) {
      const content = i === 7 ? script([{ text: "no" }, { text: "no" }, { text: "no" }]) : ok(i);
      await sendMessage(db, user, first, content, structured());
    }
    await waitFor("every request to end", async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        "select count(*)::int as n from chat_public.structured_output_requests where chat_id = $1 and status = 'pending'", [first]);
      return rows[0]!.n === 0 || undefined;
    }, 60_000);
    const { rows } = await db.pool.query<{ status: string; code: string | null; n: number }>(
      `select status::text, error_code as code, count(*)::int as n from chat_public.structured_output_requests
       where chat_id = $1 group by 1, 2 order by 1`, [first]);
    assert.equal(rows, [{ status: "failed", code: "not_produced", n: 1 }, { status: "succeeded", code: null, n: 19 }]);
    const { rows: counts } = await db.pool.query<{ n: number }>(
      "select count(*)::int as n from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'", [first]);
    assert.is(counts[0]!.n, 20, "exactly one receipt per request");
  } finally {
    await worker.stop();
  }
});

test.run();
