// finish_turn, with its cost-sensitive path pinned: it locks the chat with a read, then one UPDATE bumps the
// snapshot and sets the end state (read from the queue once the lock is held), and one read finds and locks the open
// turn's pending request. Pinned: one chat row version, the queue and the state as a commit the finish waited for
// left them, fence and refusal precedence, the receipt once before the promoted input, and the notification payloads.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, blockedOnLock, chatRow, commitCandidate, Connections, count, createChat, type Fence,
  finishTurn, receipts, sendMessage, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  ({ db, user } = await chatDatabase("finish-turn"));
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});

const connection = () => connections.open(db);

/** A structured chat whose running turn has a validated candidate; returns the fence to finish it with. */
async function withCandidate(title: string, value = '{"ok": true}'): Promise<{ chatId: string; requestId: string; fence: Fence }> {
  const chat = await createChat(db, user, title, structured());
  const fence = await commitCandidate(db, await acquire(db, chat.chat_id), value);
  return { chatId: chat.chat_id, requestId: chat.structured_output_request_id!, fence };
}

const fenceArgs = (fence: Fence) => [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt];

test("finish_turn leaves one chat row version: the bump and the end state in one UPDATE", async () => {
  const { chatId, fence } = await withCandidate("one version");
  const before = await chatRow(db, chatId);
  const client = await db.pool.connect();
  try {
    // The counter also holds the session's earlier transactions until they are reported: compare within this one.
    const updates = async () => Number((await client.query<{ n: string }>(
      "select n_tup_upd as n from pg_stat_xact_user_tables where relid = 'chat_public.chats'::regclass")).rows[0]!.n);
    await client.query("begin");
    const updatesBefore = await updates();
    await client.query("select chat_private.finish_turn($1, $2, $3, $4, null)", fenceArgs(fence));
    assert.is(await updates() - updatesBefore, 1);
    await client.query("commit");
  } finally {
    client.release();
  }
  const after = await chatRow(db, chatId);
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1);
  assert.equal([after.status, after.retry_state, after.last_error, after.pending_tool_calls, after.requires_action_deadline_at],
    ["waiting", null, null, [], null]);
  const stored = await receipts(db, chatId);
  assert.is(stored.length, 1);
  const { rows } = await db.pool.query<{ revision: string }>("select revision from chat_public.chat_messages where id = $1", [stored[0]!.id]);
  assert.is(rows[0]!.revision, String(after.snapshot_version));
});

test("a message queued by a commit finish_turn waited for is promoted after the receipt", async () => {
  const { chatId, requestId, fence } = await withCandidate("queued while waiting");
  const holder = await connection();
  const runner = await connection();
  await holder.client.query("begin");
  await holder.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  const { rows: queued } = await holder.client.query<{ queued_message_id: string }>(
    "select * from chat_public.send_chat_message($1, $2)", [chatId, JSON.stringify([{ type: "text", text: "next" }])]);
  assert.ok(queued[0]!.queued_message_id);
  const finishing = finishTurn(db, fence, null, runner.client);
  await blockedOnLock(db, runner.pid);
  await holder.client.query("commit");
  assert.is(await finishing, "running");
  assert.is(await count(db, "select 1 from chat_public.chat_queued_messages where chat_id = $1", [chatId]), 0);
  const { rows } = await db.pool.query<{ kind: string; status: string | null; text: string | null }>(
    `select kind, structured_output ->> 'status' as status, content -> 0 ->> 'text' as text
     from chat_public.chat_messages where chat_id = $1 and (kind = 'receipt' or role = 'user') order by id`, [chatId]);
  assert.equal(rows.map((r) => r.kind === "receipt" ? `receipt:${r.status}` : r.text), ["queued while waiting", "receipt:succeeded", "next"]);
  assert.is((await receipts(db, chatId))[0]!.request_id, requestId);
  assert.is(await count(db, "select 1 from chat_private.turn_progress where chat_id = $1 and finished_at is null", [chatId]), 1);
});

test("a chat interrupted by a commit finish_turn waited for is refused (CHTRN) and nothing is written", async () => {
  const { chatId, fence } = await withCandidate("interrupted while waiting");
  const before = await chatRow(db, chatId);
  const holder = await connection();
  const runner = await connection();
  await holder.client.query("begin");
  await holder.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  await holder.client.query("select chat_public.interrupt_chat($1)", [chatId]);
  const refused = finishTurn(db, fence, null, runner.client)
    .then(() => null, (error: { code?: string; detail?: string }) => [error.code, error.detail]);
  await blockedOnLock(db, runner.pid);
  await holder.client.query("commit");
  assert.equal(await refused, ["CHTRN", "interrupting"]);
  const after = await chatRow(db, chatId);
  assert.is(after.status, "interrupting");
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1, "only the interrupt's bump");
  assert.is((await receipts(db, chatId)).length, 0);
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chatId]), 1);
});

test("finish_turn refusals keep their precedence: CHNTF, then CHFNC (whatever the state), then the state", async () => {
  const { chatId, fence } = await withCandidate("precedence");
  assert.is(await sqlState(finishTurn(db, { ...fence, chatId: "00000000-0000-4000-8000-000000000000" })), "CHNTF");
  assert.is(await sqlState(finishTurn(db, { ...fence, generationAttempt: "7" })), "CHFNC");
  assert.is(await sqlState(finishTurn(db, { ...fence, runnerId: "00000000-0000-4000-8000-000000000000" })), "CHFNC");
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '1 second' where chat_id = $1", [chatId]);
  assert.is(await sqlState(finishTurn(db, fence)), "CHFNC");
  await db.pool.query("update chat_private.chat_leases set expires_at = now() + interval '1 hour' where chat_id = $1", [chatId]);
  await db.as("chat_user", user, (client) => client.query("select chat_public.interrupt_chat($1)", [chatId]), true);
  const stale = { ...fence, historyVersion: "1" };
  assert.is(await sqlState(finishTurn(db, stale)), "CHFNC", "a stale fence on an interrupting chat");
  assert.is(await sqlState(finishTurn(db, fence)), "CHTRN");
  assert.is((await receipts(db, chatId)).length, 0);
});

test("outcome errors come after the fence and undo the bump: SONCD without a candidate, CIINV for a bad outcome", async () => {
  const chat = await createChat(db, user, "no candidate", structured());
  const fence = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  assert.is(await sqlState(finishTurn(db, fence)), "SONCD");
  assert.is(await sqlState(finishTurn(db, fence, { status: "succeeded" })), "CIINV");
  assert.equal(await chatRow(db, chat.chat_id), before);
  assert.is((await receipts(db, chat.chat_id)).length, 0);
  assert.is(await finishTurn(db, fence, { status: "failed", code: "not_produced" }), "waiting");
  assert.equal((await receipts(db, chat.chat_id)).map((r) => [r.status, r.code]), [["failed", "not_produced"]]);
});

test("finish_turn waits for a lock on the pending request and writes its receipt once", async () => {
  const { chatId, requestId, fence } = await withCandidate("request locked");
  const holder = await connection();
  const runner = await connection();
  await holder.client.query("begin");
  await holder.client.query("select 1 from chat_public.structured_output_requests where id = $1 for update", [requestId]);
  const finishing = finishTurn(db, fence, null, runner.client);
  await blockedOnLock(db, runner.pid);
  await holder.client.query("commit");
  assert.is(await finishing, "waiting");
  assert.equal((await receipts(db, chatId)).map((r) => [r.request_id, r.status]), [[requestId, "succeeded"]]);
  const { rows } = await db.pool.query<{ status: string; receipt_message_id: string }>(
    "select status, receipt_message_id from chat_public.structured_output_requests where id = $1", [requestId]);
  assert.equal(rows[0], { status: "succeeded", receipt_message_id: (await receipts(db, chatId))[0]!.id });
});

test("turn_finished notifies with the chat as finish_turn left it, waiting or running", async () => {
  const listener = await connection();
  const received: Record<string, unknown>[] = [];
  listener.client.on("notification", (message) => received.push(JSON.parse(message.payload ?? "null") as Record<string, unknown>));
  const fields = ["status", "archived", "snapshot_version", "history_version", "queue_version", "generation_attempt"];
  const expected: Record<string, unknown>[] = [];
  for (const queueNext of [false, true]) {
    const { chatId, fence } = await withCandidate(queueNext ? "notify running" : "notify waiting");
    if (queueNext) await sendMessage(db, user, chatId, "next");
    await listener.client.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chatId}`)}`);
    assert.is(await finishTurn(db, fence), queueNext ? "running" : "waiting");
    const row = await chatRow(db, chatId);
    expected.push({ chat_id: chatId, change: "turn_finished",
      ...Object.fromEntries(fields.map((f) => [f, f.endsWith("version") || f === "generation_attempt" ? Number(row[f]) : row[f]])) });
  }
  for (let i = 0; i < 100 && received.length < expected.length; i++) await listener.client.query("select 1");
  assert.equal(received, expected);
});

test.run();
