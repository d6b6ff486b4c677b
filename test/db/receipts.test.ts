// Receipts: exactly one per request id, exact values, null distinct from
// absent, text fallback, failure shape, and success only from the durable candidate.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, chatStatus, commitCandidate, commitStep, count, createChat, finishTurn,
  receipts, requestStatus, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("receipts"));
});
test.after(async () => {
  await db.drop();
});

async function structuredTurn(schema: object = {}) {
  const chat = await createChat(db, user, "produce it", structured("r", schema));
  const fence = await acquire(db, chat.chat_id);
  return { chat, fence, requestId: chat.structured_output_request_id! };
}

async function receiptRow(chatId: string) {
  const { rows } = await db.pool.query<{
    id: string; status: string; has_value: boolean; value_text: string | null; content_text: string; code: string | null;
    message: string | null; request_id: string; visibility: string; role: string;
  }>(`select id, structured_output ->> 'status' as status, structured_output ? 'value' as has_value,
        (structured_output -> 'value')::text as value_text, content -> 0 ->> 'text' as content_text,
        structured_output -> 'error' ->> 'code' as code, structured_output -> 'error' ->> 'message' as message,
        structured_output ->> 'request_id' as request_id, visibility, role
      from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'`, [chatId]);
  assert.is(rows.length, 1, "exactly one receipt");
  return rows[0]!;
}

const receiptCount = (requestId: string) =>
  count(db, "select 1 from chat_public.chat_messages where structured_output_request_id = $1 and kind = 'receipt'", [requestId]);

test("_write_receipt twice: the second call returns null and writes nothing", async () => {
  const { chat, requestId } = await structuredTurn();
  const call = () => db.pool.query<{ id: string | null }>(
    "select chat_private._write_receipt($1, 'canceled', 'operator_canceled') as id", [requestId]);
  const first = (await call()).rows[0]!.id;
  assert.ok(first);
  const second = (await call()).rows[0]!.id;
  assert.is(second, null);
  assert.is(await receiptCount(requestId), 1);
  const request = await requestStatus(db, requestId);
  assert.equal(request, { status: "canceled", error_code: "operator_canceled", receipt_message_id: first });
  // A different terminal outcome arriving later changes nothing either.
  const late = await db.pool.query<{ id: string | null }>(
    "select chat_private._write_receipt($1, 'succeeded', null, null, '1'::jsonb) as id", [requestId]);
  assert.is(late.rows[0]!.id, null);
  assert.is((await receiptRow(chat.chat_id)).code, "operator_canceled");
});

test("finish_turn twice: the second raises CHFNC and writes no second receipt", async () => {
  const { chat, fence, requestId } = await structuredTurn();
  const next = await commitCandidate(db, fence, '{"ok": true}');
  assert.is(await finishTurn(db, next), "waiting");
  assert.is(await sqlState(finishTurn(db, next)), "CHFNC");
  assert.is(await receiptCount(requestId), 1);
  assert.is((await receipts(db, chat.chat_id)).length, 1);
});

test("finish_turn after the request already has its receipt does not write another (ambiguous commit recovery)", async () => {
  const { chat, fence, requestId } = await structuredTurn();
  const next = await commitCandidate(db, fence, "42");
  await db.pool.query("select chat_private._write_receipt($1, 'canceled', 'operator_canceled')", [requestId]);
  assert.is(await finishTurn(db, next), "waiting");
  assert.is(await receiptCount(requestId), 1);
  assert.is((await receiptRow(chat.chat_id)).code, "operator_canceled");
});

test("a second receipt row for the same request is refused by the unique index (23505)", async () => {
  const { chat, fence, requestId } = await structuredTurn();
  await finishTurn(db, await commitCandidate(db, fence, "1"));
  const client = await db.pool.connect();
  try {
    await client.query("begin");
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    const state = await sqlState(client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind,
      content, structured_output_request_id, structured_output) values ($1, 'assistant', 'user', 'receipt', '[]', $2, '{}')`,
    [chat.chat_id, requestId]));
    assert.is(state, "23505");
  } finally {
    await client.query("rollback");
    client.release();
  }
});

test("success receipt keeps big integers and long decimals exactly", async () => {
  const value = '{"big": 12345678901234567890123, "dec": 0.10000000000000000000000000000000000001, "neg": -98765432109876543210.5, "s": "ü\\u0001"}';
  const { chat, fence } = await structuredTurn();
  await finishTurn(db, await commitCandidate(db, fence, value));
  const receipt = await receiptRow(chat.chat_id);
  assert.is(receipt.status, "succeeded");
  assert.ok(receipt.value_text!.includes("12345678901234567890123"), receipt.value_text!);
  assert.ok(receipt.value_text!.includes("0.10000000000000000000000000000000000001"), receipt.value_text!);
  assert.ok(receipt.value_text!.includes("-98765432109876543210.5"), receipt.value_text!);
  const { rows } = await db.pool.query<{ same: boolean }>(
    "select (structured_output -> 'value') = $2::jsonb as same from chat_public.chat_messages where id = $1", [receipt.id, value]);
  assert.is(rows[0]!.same, true);
});

test("a null value succeeds and is distinct from an absent value", async () => {
  const { chat, fence, requestId } = await structuredTurn({ type: "null" });
  await finishTurn(db, await commitCandidate(db, fence, "null"));
  const receipt = await receiptRow(chat.chat_id);
  assert.is(receipt.status, "succeeded");
  assert.is(receipt.has_value, true, "structured_output ? 'value'");
  assert.is(receipt.value_text, "null");
  assert.is(receipt.content_text, "null");
  assert.is((await requestStatus(db, requestId)).status, "succeeded");

  const failed = await structuredTurn();
  await finishTurn(db, failed.fence, { status: "failed", code: "not_produced" });
  assert.is((await receiptRow(failed.chat.chat_id)).has_value, false, "a failure has no value at all");
});

test("success text fallback is the JSON text of the value; the receipt is a user-visible assistant row", async () => {
  const { chat, fence, requestId } = await structuredTurn();
  await finishTurn(db, await commitCandidate(db, fence, '{"command": "ls -la", "n": [1, 2.50]}'));
  const receipt = await receiptRow(chat.chat_id);
  assert.is(receipt.content_text, receipt.value_text);
  assert.equal(JSON.parse(receipt.content_text), { command: "ls -la", n: [1, 2.5] });
  assert.is(receipt.request_id, requestId);
  assert.is(receipt.visibility, "user");
  assert.is(receipt.role, "assistant");
});

test("failure receipts carry error.code and a short sentence", async () => {
  for (const code of ["not_produced", "validation_exhausted", "refused", "configuration_error"]) {
    const { chat, fence, requestId } = await structuredTurn();
    assert.is(await finishTurn(db, fence, { status: "failed", code }), "waiting");
    const receipt = await receiptRow(chat.chat_id);
    assert.is(receipt.status, "failed", code);
    assert.is(receipt.code, code);
    assert.ok(receipt.message && receipt.message.length > 10 && receipt.message.length <= 200 && /\.$/.test(receipt.message), receipt.message ?? "");
    assert.is(receipt.content_text, receipt.message);
    assert.is(receipt.has_value, false);
    const request = await requestStatus(db, requestId);
    assert.is(request.status, "failed");
    assert.is(request.error_code, code);
    assert.is(request.receipt_message_id, receipt.id);
  }
});

test("an unknown failure code is refused and nothing is written (23514)", async () => {
  const { chat, fence } = await structuredTurn();
  assert.is(await sqlState(finishTurn(db, fence, { status: "failed", code: "made_up" })), "23514");
  assert.is((await receipts(db, chat.chat_id)).length, 0);
  assert.is(await chatStatus(db, chat.chat_id), "running");
});

test("finish_turn without a candidate raises SONCD and leaves the turn running", async () => {
  const { chat, fence, requestId } = await structuredTurn();
  const next = await commitStep(db, fence, [assistantText("just text, no finalizer")], { steps: 1 });
  assert.is(await sqlState(finishTurn(db, next)), "SONCD");
  assert.is((await receipts(db, chat.chat_id)).length, 0);
  assert.is((await requestStatus(db, requestId)).status, "pending");
  assert.is(await chatStatus(db, chat.chat_id), "running");
});

test("a _write_receipt success without a value raises SONCD", async () => {
  const { requestId } = await structuredTurn();
  assert.is(await sqlState(db.pool.query("select chat_private._write_receipt($1, 'succeeded')", [requestId])), "SONCD");
  assert.is(await receiptCount(requestId), 0);
});

test("a candidate without a value is refused by commit_step (SONCD)", async () => {
  const { fence } = await structuredTurn();
  assert.is(await sqlState(commitStep(db, fence, [assistantText("x")], { candidate: { step: 1, message_index: 0 } })), "SONCD");
});

test("commit_step records the candidate; success takes the value from it, never from the caller (CIINV)", async () => {
  const { chat, fence } = await structuredTurn();
  const next = await commitCandidate(db, fence, '{"from": "candidate"}', 3);
  const { rows } = await db.pool.query<{ candidate_present: boolean; value: string; candidate_step: number; is_step_message: boolean }>(
    `select t.candidate_present, t.candidate_value::text as value, t.candidate_step,
            t.candidate_message_id = (select max(id) from chat_public.chat_messages m where m.chat_id = t.chat_id) as is_step_message
     from chat_private.turn_progress t where t.chat_id = $1 and t.finished_at is null`, [chat.chat_id]);
  assert.equal(rows[0], { candidate_present: true, value: '{"from": "candidate"}', candidate_step: 3, is_step_message: true });
  assert.is(await sqlState(finishTurn(db, next, { status: "succeeded", value: { from: "caller" } })), "CIINV");
  assert.is((await receipts(db, chat.chat_id)).length, 0);
  await finishTurn(db, next);
  assert.is((await receiptRow(chat.chat_id)).value_text, '{"from": "candidate"}');
});

test("a closed turn keeps no candidate value: the receipt holds it, the turn only that it had one", async () => {
  const { chat, fence } = await structuredTurn();
  await finishTurn(db, await commitCandidate(db, fence, '{"kept": "in the receipt"}', 1));
  const { rows } = await db.pool.query(
    "select candidate_present, candidate_value, finished_at is not null as closed from chat_private.turn_progress where chat_id = $1",
    [chat.chat_id]);
  assert.equal(rows, [{ candidate_present: true, candidate_value: null, closed: true }]);
  assert.is((await receiptRow(chat.chat_id)).value_text, '{"kept": "in the receipt"}');
});

test("a later candidate replaces an earlier one; an invalidated candidate cannot finish (SONCD)", async () => {
  const { chat, fence } = await structuredTurn();
  let next = await commitCandidate(db, fence, '"first"', 1);
  next = await commitCandidate(db, next, '"second"', 2);
  // A continuing stop hook invalidates the candidate with a control row.
  next = await commitStep(db, next, [{ role: "user", kind: "control", visibility: "model", content: [{ type: "text", text: "hook" }] }],
    { invalidate_candidate: true, hook_continuation: true });
  assert.is(await sqlState(finishTurn(db, next)), "SONCD");
  const { rows } = await db.pool.query(
    "select candidate_present, candidate_value, invalidations, hook_continuations from chat_private.turn_progress where chat_id = $1 and finished_at is null",
    [chat.chat_id]);
  assert.equal(rows[0], { candidate_present: false, candidate_value: null, invalidations: 1, hook_continuations: 1 });
  next = await commitCandidate(db, next, '"third"', 4);
  await finishTurn(db, next);
  assert.is((await receiptRow(chat.chat_id)).value_text, '"third"');
});

test("a text turn finishes without any receipt", async () => {
  const chat = await createChat(db, user, "plain");
  const fence = await acquire(db, chat.chat_id);
  assert.is(await finishTurn(db, await commitStep(db, fence, [assistantText("hi")])), "waiting");
  assert.is((await receipts(db, chat.chat_id)).length, 0);
});

test.run();
