// The queue: deletion receipts, promotion keeping request ids, interrupts, busy_behavior interrupt, failure path.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, blockedOnLock, chatRow, chatStatus, commitStep, connect, count, createChat,
  currentFence, deleteQueued, finishError, finishInterruption, finishTurn, interrupt, promoteQueued, receipts,
  requestStatus, sendMessage, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("queue"));
});
test.after(async () => {
  await db.drop();
});

async function queue(chatId: string): Promise<{ id: string; request_id: string | null; text: string }[]> {
  const { rows } = await db.pool.query(
    `select id, structured_output_request_id as request_id, content -> 0 ->> 'text' as text
     from chat_public.chat_queued_messages where chat_id = $1 order by position`, [chatId]);
  return rows;
}

async function inputMessage(id: string) {
  const { rows } = await db.pool.query<{ text: string; request_id: string | null; role: string }>(
    `select content -> 0 ->> 'text' as text, structured_output_request_id as request_id, role
     from chat_public.chat_messages where id = $1`, [id]);
  return rows[0]!;
}

async function openTurn(chatId: string) {
  const { rows } = await db.pool.query<{ input_message_id: string; request_id: string | null }>(
    `select input_message_id, structured_output_request_id as request_id from chat_private.turn_progress
     where chat_id = $1 and finished_at is null`, [chatId]);
  return rows[0];
}

test("deleting a queued structured request writes a queue_deleted receipt while another turn runs, keeping its fence", async () => {
  const chat = await createChat(db, user, "running turn");
  const fence = await acquire(db, chat.chat_id);
  const queued = await sendMessage(db, user, chat.chat_id, "later", structured("later"));
  assert.ok(queued.queued_message_id);
  assert.is(queued.message_id, null);
  const requestId = queued.structured_output_request_id!;
  const result = await deleteQueued(db, user, queued.queued_message_id!);
  assert.is(result.structured_output_request_id, requestId);
  assert.is(result.receipt_message_ids.length, 1);
  assert.equal(await queue(chat.chat_id), []);
  assert.equal(await requestStatus(db, requestId),
    { status: "canceled", error_code: "queue_deleted", receipt_message_id: result.receipt_message_ids[0] });
  assert.equal(await currentFence(db, chat.chat_id), fence);
  assert.is(await chatStatus(db, chat.chat_id), "running");
  await commitStep(db, fence, [assistantText("unaffected")]);
});

test("deleting a queued text message writes no receipt", async () => {
  const chat = await createChat(db, user, "running");
  await acquire(db, chat.chat_id);
  const queued = await sendMessage(db, user, chat.chat_id, "plain later");
  const result = await deleteQueued(db, user, queued.queued_message_id!);
  assert.equal(result.receipt_message_ids, []);
  assert.equal(await receipts(db, chat.chat_id), []);
});

test("finish_turn promotes the queue head and keeps its request id on the new input message", async () => {
  const chat = await createChat(db, user, "first");
  const fence = await acquire(db, chat.chat_id);
  const queued = await sendMessage(db, user, chat.chat_id, "second", structured("second"));
  const requestId = queued.structured_output_request_id!;
  assert.is(await finishTurn(db, await commitStep(db, fence, [assistantText("done")])), "running");
  assert.equal(await queue(chat.chat_id), []);
  const turn = await openTurn(chat.chat_id);
  assert.ok(turn);
  assert.is(turn.request_id, requestId);
  assert.equal(await inputMessage(turn.input_message_id), { text: "second", request_id: requestId, role: "user" });
  assert.is((await requestStatus(db, requestId)).status, "pending");
  // The promoted turn runs with a fresh lease.
  const next = await acquire(db, chat.chat_id);
  await commitStep(db, next, [assistantText("working on second")]);
});

test("interrupting request A with request B queued: A gets an interrupted receipt, B is promoted with its own id", async () => {
  const a = await createChat(db, user, "request A", structured("a"));
  const fence = await acquire(db, a.chat_id);
  const b = await sendMessage(db, user, a.chat_id, "request B", structured("b"));
  const requestB = b.structured_output_request_id!;
  assert.is.not(requestB, a.structured_output_request_id);
  await interrupt(db, user, a.chat_id);
  assert.is(await chatStatus(db, a.chat_id), "interrupting");
  assert.is(await finishInterruption(db, fence, [assistantText("partial answer")]), "running");

  const [receipt, ...others] = await receipts(db, a.chat_id);
  assert.equal(others, []);
  assert.ok(receipt);
  assert.is(receipt.request_id, a.structured_output_request_id);
  assert.is(receipt?.code, "interrupted");
  assert.is((await requestStatus(db, requestB)).status, "pending");
  const turn = await openTurn(a.chat_id);
  assert.is(turn?.request_id, requestB);
  assert.is((await inputMessage(turn!.input_message_id)).request_id, requestB);
  assert.ok(BigInt(receipt.id) < BigInt(turn!.input_message_id), "the receipt precedes B's input");
  const { rows } = await db.pool.query<{ id: string }>(
    "select id from chat_public.chat_messages where chat_id = $1 and role = 'assistant' and kind = 'message'", [a.chat_id]);
  assert.ok(BigInt(rows[0]!.id) < BigInt(receipt.id), "partial output precedes the receipt");
});

test("send_chat_message with busy_behavior interrupt queues at the head and interrupts", async () => {
  const chat = await createChat(db, user, "running");
  const fence = await acquire(db, chat.chat_id);
  await sendMessage(db, user, chat.chat_id, "queued first");
  const urgent = await sendMessage(db, user, chat.chat_id, "urgent", null, "interrupt");
  assert.ok(urgent.queued_message_id);
  assert.equal((await queue(chat.chat_id)).map((q) => q.text), ["urgent", "queued first"]);
  assert.is(await chatStatus(db, chat.chat_id), "interrupting");
  assert.is(await finishInterruption(db, fence), "running");
  const turn = await openTurn(chat.chat_id);
  assert.is((await inputMessage(turn!.input_message_id)).text, "urgent");
  assert.equal((await queue(chat.chat_id)).map((q) => q.text), ["queued first"]);
});

test("promoting a queued message over a running turn interrupts it and runs that message next", async () => {
  const chat = await createChat(db, user, "running", structured("current"));
  const fence = await acquire(db, chat.chat_id);
  await sendMessage(db, user, chat.chat_id, "one");
  const two = await sendMessage(db, user, chat.chat_id, "two", structured("two"));
  const promoted = await promoteQueued(db, user, two.queued_message_id!);
  assert.is(promoted.message_id, null);
  assert.is(promoted.queued_message_id, two.queued_message_id);
  assert.is(await chatStatus(db, chat.chat_id), "interrupting");
  assert.equal((await queue(chat.chat_id)).map((q) => q.text), ["two", "one"]);
  await finishInterruption(db, fence);
  const turn = await openTurn(chat.chat_id);
  assert.is(turn?.request_id, two.structured_output_request_id);
  assert.equal((await receipts(db, chat.chat_id)).map((r) => r.code), ["interrupted"]);
});

test("a structured request failing for its own reasons finishes the turn and promotes the queue", async () => {
  const chat = await createChat(db, user, "A", structured("a"));
  const fence = await acquire(db, chat.chat_id);
  await sendMessage(db, user, chat.chat_id, "B");
  assert.is(await finishTurn(db, fence, { status: "failed", code: "validation_exhausted" }), "running");
  assert.equal((await receipts(db, chat.chat_id)).map((r) => r.code), ["validation_exhausted"]);
  assert.is((await inputMessage((await openTurn(chat.chat_id))!.input_message_id)).text, "B");
});

test("finish_error fails the active request with generation_failed, the chat enters error; queued structured requests get failed receipts, plain ones wait; a send runs the oldest first", async () => {
  const chat = await createChat(db, user, "A", structured("a"));
  const fence = await acquire(db, chat.chat_id);
  await sendMessage(db, user, chat.chat_id, "B");
  const c = await sendMessage(db, user, chat.chat_id, "C", structured("c"));
  await finishError(db, fence, "provider_error", "the provider returned 500 three times");
  assert.is(await chatStatus(db, chat.chat_id), "error");
  const row = await chatRow(db, chat.chat_id);
  assert.equal(row.last_error, { kind: "provider_error", message: "the provider returned 500 three times" });
  const [receipt, queuedReceipt, ...others] = await receipts(db, chat.chat_id);
  assert.equal(others, []);
  assert.is(receipt?.request_id, chat.structured_output_request_id);
  assert.is(receipt?.status, "failed");
  assert.is(receipt?.code, "generation_failed");
  assert.is(queuedReceipt?.request_id, c.structured_output_request_id, "the queued structured request is not left pending");
  assert.is(queuedReceipt?.code, "generation_failed");
  const { rows: failed } = await db.pool.query("select error_message from chat_public.structured_output_requests where id = $1",
    [c.structured_output_request_id]);
  assert.match(failed[0].error_message, /entered error \(provider_error\)/);
  assert.equal((await queue(chat.chat_id)).map((q) => q.text), ["B"]);
  assert.is(await openTurn(chat.chat_id), undefined);
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chat.chat_id]), 0);

  const d = await sendMessage(db, user, chat.chat_id, "D");
  assert.is(d.message_id, null, "D is queued behind older messages");
  assert.ok(d.queued_message_id);
  assert.is(await chatStatus(db, chat.chat_id), "running");
  assert.is((await chatRow(db, chat.chat_id)).last_error, null);
  assert.is((await inputMessage((await openTurn(chat.chat_id))!.input_message_id)).text, "B");
  assert.equal((await queue(chat.chat_id)).map((q) => q.text), ["D"]);
});

test("a send to an idle chat with an empty queue starts a turn at once", async () => {
  const chat = await createChat(db, user, "A");
  const fence = await acquire(db, chat.chat_id);
  await finishTurn(db, fence);
  const sent = await sendMessage(db, user, chat.chat_id, "B", structured("b"));
  assert.ok(sent.message_id);
  assert.is(sent.queued_message_id, null);
  assert.is((await inputMessage(sent.message_id!)).request_id, sent.structured_output_request_id);
  assert.is(await chatStatus(db, chat.chat_id), "running");
});

/**
 * The worker's finish_turn promotes queued message q in an open transaction; meanwhile the client acts on q (it read q
 * before the chat lock) and waits for the lock. Once the promotion commits, q is no longer queued.
 */
async function raceWithPromotion(clientCall: string) {
  const chat = await createChat(db, user, "running");
  const fence = await acquire(db, chat.chat_id);
  const q = await sendMessage(db, user, chat.chat_id, "next", structured("next"));
  const later = await sendMessage(db, user, chat.chat_id, "after next");
  const worker = await connect(db);
  const client = await connect(db, { role: "chat_user", userId: user });
  try {
    await worker.client.query("begin");
    assert.is(await finishTurn(db, fence, null, worker.client), "running");
    const call = sqlState(client.client.query(clientCall, [q.queued_message_id]));
    await blockedOnLock(db, client.pid);
    await worker.client.query("commit");
    const state = await call;
    await client.client.query("rollback");
    return { chat, q, later, state };
  } finally {
    await worker.client.end();
    await client.client.end();
  }
}

test("deleting a queued message that was promoted meanwhile raises QMNTF and cancels nothing", async () => {
  const { chat, q, state } = await raceWithPromotion("select chat_public.delete_queued_message($1)");
  assert.is(state, "QMNTF");
  assert.equal(await receipts(db, chat.chat_id), []);
  assert.is((await requestStatus(db, q.structured_output_request_id!)).status, "pending");
  assert.is((await openTurn(chat.chat_id))?.request_id, q.structured_output_request_id);
});

test("promoting a queued message that was promoted meanwhile raises QMNTF and does not interrupt its turn", async () => {
  const { chat, q, state } = await raceWithPromotion("select chat_public.promote_queued_message($1)");
  assert.is(state, "QMNTF");
  assert.is(await chatStatus(db, chat.chat_id), "running");
  assert.is((await openTurn(chat.chat_id))?.request_id, q.structured_output_request_id);
  assert.equal((await queue(chat.chat_id)).map((x) => x.text), ["after next"]);
});

test.run();
