// Edit: superseded receipts for the discarded suffix and queue,
// finished requests untouched, the replacement's format, the preserve recheck (RFSTL), and the fence.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, blockedOnLock, chatRow, chatStatus, commitCandidate, commitStep, connect,
  count, createChat, createUser, editMessage, finishTurn, receipts, requestStatus, sendMessage, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("editor"));
});
test.after(async () => {
  await db.drop();
});

async function request(id: string) {
  const { rows } = await db.pool.query<{ name: string; schema: unknown; schema_sha256: string; status: string }>(
    "select name, schema, schema_sha256, status from chat_public.structured_output_requests where id = $1", [id]);
  return rows[0]!;
}

/** Everything an edit could change, to prove a refused edit changed nothing. */
async function snapshot(chatId: string) {
  const { rows } = await db.pool.query(
    `select (select json_agg(m order by m.id) from chat_public.chat_messages m where m.chat_id = $1) as messages,
            (select json_agg(q order by q.id) from chat_public.chat_queued_messages q where q.chat_id = $1) as queue,
            (select json_agg(r order by r.id) from chat_public.structured_output_requests r where r.chat_id = $1) as requests,
            (select json_agg(t order by t.id) from chat_private.turn_progress t where t.chat_id = $1) as turns,
            (select row_to_json(c) from chat_public.chats c where c.id = $1) as chat`, [chatId]);
  return rows[0];
}

/**
 * m1 (request R1, finished: succeeded), m2 (request R2, running), queue: q1 (R3), q2 (text), q3 (R4).
 */
async function busyChat() {
  const first = await createChat(db, user, "m1", structured("r1"));
  const chatId = first.chat_id;
  let fence = await acquire(db, chatId);
  await finishTurn(db, await commitCandidate(db, fence, '"one"'));
  const second = await sendMessage(db, user, chatId, "m2", structured("r2"));
  fence = await acquire(db, chatId);
  fence = await commitStep(db, fence, [assistantText("working on m2")]);
  const q1 = await sendMessage(db, user, chatId, "q1", structured("r3"));
  const q2 = await sendMessage(db, user, chatId, "q2");
  const q3 = await sendMessage(db, user, chatId, "q3", structured("r4"));
  return {
    chatId, fence, m1: first.message_id!, m2: second.message_id!,
    r1: first.structured_output_request_id!, r2: second.structured_output_request_id!,
    r3: q1.structured_output_request_id!, r4: q3.structured_output_request_id!, q2: q2.queued_message_id!,
  };
}

test("edit supersedes pending requests of the suffix and the queue in id order and lists the receipts", async () => {
  const c = await busyChat();
  const result = await editMessage(db, user, c.m1, "m1 edited", JSON.stringify({ type: "text" }));
  const all = await receipts(db, c.chatId);
  const superseded = all.filter((r) => r.code === "superseded");
  assert.equal(superseded.map((r) => r.request_id), [c.r2, c.r3, c.r4]);
  assert.equal(result.receipt_message_ids, superseded.map((r) => r.id));
  const ids = result.receipt_message_ids.map(BigInt);
  assert.equal(ids, [...ids].sort((x, y) => (x < y ? -1 : 1)), "receipt ids ascend");
  for (const id of [c.r2, c.r3, c.r4]) {
    const r = await requestStatus(db, id);
    assert.is(r.status, "canceled");
    assert.is(r.error_code, "superseded");
  }
  assert.ok(ids.every((id) => id < BigInt(result.message_id!)), "receipts precede the replacement input");
  assert.is(await count(db, "select 1 from chat_public.chat_queued_messages where chat_id = $1", [c.chatId]), 0);
  assert.is(await count(db, `select 1 from chat_public.structured_output_requests r
    join chat_public.chat_messages m on m.structured_output_request_id = r.id and m.kind = 'message'
    where r.chat_id = $1 and r.status = 'pending' and m.deleted`, [c.chatId]), 0, "no live request lost its input");
});

test("edit leaves already finished requests alone (no second receipt)", async () => {
  const c = await busyChat();
  await editMessage(db, user, c.m1, "m1 edited", JSON.stringify({ type: "text" }));
  const forR1 = (await receipts(db, c.chatId)).filter((r) => r.request_id === c.r1);
  assert.is(forR1.length, 1);
  assert.is(forR1[0]!.status, "succeeded");
  assert.is((await requestStatus(db, c.r1)).status, "succeeded");
});

test("edit with response_format omitted preserves the format under a fresh request id", async () => {
  const c = await busyChat();
  const result = await editMessage(db, user, c.m2, "m2 edited");
  const fresh = result.structured_output_request_id;
  assert.ok(fresh);
  assert.is.not(fresh, c.r2);
  const [before, after] = [await request(c.r2), await request(fresh)];
  assert.is(after.name, before.name);
  assert.equal(after.schema, before.schema);
  assert.is(after.schema_sha256, before.schema_sha256);
  assert.is(after.status, "pending");
  const { rows } = await db.pool.query("select structured_output_request_id as id from chat_public.chat_messages where id = $1",
    [result.message_id]);
  assert.is(rows[0]!.id, fresh);
  // r2 (the edited message's own request) is superseded, r1 (before the edit point) keeps its receipt.
  assert.is((await requestStatus(db, c.r2)).error_code, "superseded");
  assert.is((await requestStatus(db, c.r1)).status, "succeeded");
});

test("edit with {\"type\":\"text\"} clears the format: no request", async () => {
  const c = await busyChat();
  const result = await editMessage(db, user, c.m2, "m2 as text", JSON.stringify({ type: "text" }));
  assert.is(result.structured_output_request_id, null);
  const { rows } = await db.pool.query("select structured_output_request_id as id from chat_public.chat_messages where id = $1",
    [result.message_id]);
  assert.is(rows[0]!.id, null);
});

test("edit with a new json_schema replaces the format", async () => {
  const c = await busyChat();
  const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] };
  const result = await editMessage(db, user, c.m2, "m2 new schema", structured("replacement", schema));
  const fresh = await request(result.structured_output_request_id!);
  assert.is(fresh.name, "replacement");
  assert.equal(fresh.schema, schema);
  const { rows } = await db.pool.query<{ sha: string }>("select encode(sha256(convert_to($1::jsonb::text, 'UTF8')), 'hex') as sha",
    [JSON.stringify(schema)]);
  assert.is(fresh.schema_sha256, rows[0]!.sha, "schema_sha256 is the SHA-256 of schema::text");
});

test("an edit of a text message with response_format omitted stays text", async () => {
  const chat = await createChat(db, user, "plain");
  const result = await editMessage(db, user, chat.message_id!, "plain edited");
  assert.is(result.structured_output_request_id, null);
});

test("a preserve whose validated hash no longer matches is refused (RFSTL) and changes nothing", async () => {
  const c = await busyChat();
  const before = await snapshot(c.chatId);
  const state = await sqlState(editMessage(db, user, c.m2, "m2 edited", null, { sha256: "0".repeat(64) }));
  assert.is(state, "RFSTL");
  assert.equal(await snapshot(c.chatId), before);
});

test("a preserve whose history version no longer matches is refused (RFSTL) and changes nothing", async () => {
  const c = await busyChat();
  const read = String((await chatRow(db, c.chatId)).history_version);
  const hash = (await request(c.r2)).schema_sha256;
  // History moves after the API read and validated the stored format.
  await commitStep(db, c.fence, [assistantText("more history")]);
  const before = await snapshot(c.chatId);
  const state = await sqlState(editMessage(db, user, c.m2, "m2 edited", null, { sha256: hash, historyVersion: read }));
  assert.is(state, "RFSTL");
  assert.equal(await snapshot(c.chatId), before);
  // With what holds now, the same preserve goes through.
  const now = String((await chatRow(db, c.chatId)).history_version);
  const result = await editMessage(db, user, c.m2, "m2 edited", null, { sha256: hash, historyVersion: now });
  assert.ok(result.structured_output_request_id);
});

test("an edit fences the running runner out (CHFNC) and restarts the turn", async () => {
  const c = await busyChat();
  await editMessage(db, user, c.m2, "m2 edited");
  assert.is(await sqlState(commitStep(db, c.fence, [assistantText("stale")])), "CHFNC");
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [c.chatId]), 0);
  assert.is(await chatStatus(db, c.chatId), "running");
  const fresh = await acquire(db, c.chatId);
  await commitStep(db, fresh, [assistantText("new turn")]);
});

test("edit discards the suffix (soft delete) and keeps earlier history", async () => {
  const c = await busyChat();
  const result = await editMessage(db, user, c.m2, "m2 edited");
  const { rows } = await db.pool.query<{ id: string; deleted: boolean; kind: string }>(
    "select id, deleted, kind from chat_public.chat_messages where chat_id = $1 order by id", [c.chatId]);
  for (const row of rows) {
    const id = BigInt(row.id);
    if (id < BigInt(c.m2) || id === BigInt(result.message_id!)) assert.is(row.deleted, false, row.id);
    else if (row.kind !== "receipt" || id < BigInt(result.receipt_message_ids[0]!)) assert.is(row.deleted, true, row.id);
  }
});

test("editing another user's message or a non-user message raises MSNTF", async () => {
  const c = await busyChat();
  const other = await createUser(db, "someone-else");
  assert.is(await sqlState(editMessage(db, other, c.m1, "hijack")), "MSNTF");
  const { rows } = await db.pool.query<{ id: string }>(
    "select id from chat_public.chat_messages where chat_id = $1 and role = 'assistant' limit 1", [c.chatId]);
  assert.is(await sqlState(editMessage(db, user, rows[0]!.id, "not mine to edit")), "MSNTF");
});

test("an edit that waited for a concurrent edit of the same message raises MSNTF and discards nothing", async () => {
  const c = await busyChat();
  const first = await connect(db, { role: "chat_user", userId: user });
  const second = await connect(db, { role: "chat_user", userId: user });
  const edit = (client: typeof first.client, content: string) => client.query<{ message_id: string }>(
    "select * from chat_public.edit_chat_message($1, $2, $3)", [c.m2, JSON.stringify([{ type: "text", text: content }]),
      JSON.stringify({ type: "text" })]);
  let won: { message_id: string } | undefined;
  try {
    won = (await edit(first.client, "first edit")).rows[0]!;
    const racing = sqlState(edit(second.client, "second edit"));
    await blockedOnLock(db, second.pid);
    await first.client.query("commit");
    assert.is(await racing, "MSNTF");
    await second.client.query("rollback");
  } finally {
    await first.client.end();
    await second.client.end();
  }
  const { rows } = await db.pool.query<{ id: string; text: string }>(
    "select id, content -> 0 ->> 'text' as text from chat_public.chat_messages where chat_id = $1 and role = 'user' and not deleted order by id",
    [c.chatId]);
  assert.equal(rows.map((r) => r.text), ["m1", "first edit"]);
  assert.is(rows[1]!.id, won?.message_id);
});

test.run();
