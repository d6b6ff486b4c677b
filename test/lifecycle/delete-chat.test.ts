// Deleting a chat in SQL (sql/160_data_lifecycle.sql): nothing of it is left in any table, who may delete it, and
// what a poller of its structured request reads afterwards.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import {
  acquire, archiveChat, assistantText, commitStep, count, createChat, createUser, sendMessage, setStructuredExperiment,
  structured, text,
} from "../support/chats.ts";
import { chatTables, leftovers } from "./support.ts";

let db: TestDatabase;
let owner: string;
let other: string;

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  owner = await createUser(db, "owner");
  other = await createUser(db, "other");
});
test.after(async () => {
  await db.drop();
});

/** A chat with something in every table a chat reaches: history, internals, a queue, requests, a turn, a lease, a child, jobs, an idempotency key. */
async function busyChat(): Promise<{ chatId: string; childId: string; requestIds: string[]; messageIds: string[] }> {
  const chat = await createChat(db, owner, "first", structured(), { idempotencyKey: `k-${Math.random()}` });
  const fence = await acquire(db, chat.chat_id);
  await commitStep(db, fence, [{ ...assistantText("working"), internals: { finish: { reason: "tool-calls" } } }], { steps: 1 });
  const queued = await sendMessage(db, owner, chat.chat_id, "next", structured("second"));
  const { rows: [child] } = await db.pool.query<{ id: string }>(
    "select chat_private.spawn_child_chat($1, $2, $3, 'agent', $4) as id",
    [chat.chat_id, fence.runnerId, text("child task"), `agent:${chat.chat_id}:call-1`]);
  const { rows: messageRows } = await db.pool.query<{ id: string }>(
    "select id from chat_public.chat_messages where chat_id = any($1)", [[chat.chat_id, child!.id]]);
  return { chatId: chat.chat_id, childId: child!.id, requestIds: [chat.structured_output_request_id!, queued.structured_output_request_id!],
    messageIds: messageRows.map((r) => r.id) };
}

test("the check covers every table with a chat column", async () => {
  const tables = await chatTables(db);
  for (const t of ["chat_public.chat_messages", "chat_public.chat_queued_messages", "chat_public.structured_output_requests",
    "chat_private.turn_progress", "chat_private.chat_leases", "chat_public.batch_items", "chat_public.chats"]) {
    assert.ok(tables.includes(t), `${t} in ${tables.join(", ")}`);
  }
});

test("the owner's delete removes the chat, its child and every row that names them, in one transaction", async () => {
  const chat = await busyChat();
  const ids = [chat.chatId, chat.childId];
  const before = await leftovers(db, ids, chat.messageIds);
  for (const t of ["chat_public.chat_messages.chat_id", "chat_public.chat_queued_messages.chat_id", "chat_private.turn_progress.chat_id",
    "chat_private.chat_leases.chat_id", "chat_public.structured_output_requests.chat_id", "chat_private.message_internals",
    "chat_private.idempotency_keys", "graphile_worker.jobs", "chat_public.chats.parent_chat_id"]) {
    assert.ok((before[t] ?? 0) > 0, `the setup has rows in ${t}: ${JSON.stringify(before)}`);
  }
  const { rows } = await db.as("chat_user", owner, (c) => c.query<{ id: string }>("select chat_public.delete_chat($1) as id", [chat.chatId]), true);
  assert.is(rows[0]!.id, chat.chatId);
  assert.equal(await leftovers(db, ids, chat.messageIds), {});
});

test("the chat's /v1 Response record and webhook deliveries go with it; the user's endpoint stays", async () => {
  const { rows: [endpoint] } = await db.pool.query<{ id: string }>("select chat_private.webhook_add($1, $2, null, $3) as id",
    [owner, "https://receiver.example/hook", `whsec_${Buffer.alloc(32, 7).toString("base64")}`]);
  const { rows: [response] } = await db.as("chat_user", owner, (c) => c.query<{ id: string }>(
    "select chat_public.openai_create_response($1, $2, null, null, '[]', false, '{}', $3, 'key-1') as id",
    [text("first"), structured(), "0".repeat(64)]), true);
  const { rows: [chat] } = await db.pool.query<{ chat_id: string }>(
    "select chat_id from chat_public.structured_output_requests where id = $1", [response!.id]);
  // A second request, queued and then canceled: its terminal update writes a delivery (response.cancelled).
  const queued = await sendMessage(db, owner, chat!.chat_id, "second", structured("second"));
  await db.as("chat_user", owner, (c) => c.query("select chat_public.openai_cancel_response($1)", [queued.structured_output_request_id]), true);
  const requestIds = [response!.id, queued.structured_output_request_id!];
  const before = await leftovers(db, [chat!.chat_id], [], requestIds);
  assert.is(before["chat_private.webhook_deliveries"], 1, JSON.stringify(before));
  assert.is(before["chat_private.openai_responses.chat_id"], 1, JSON.stringify(before));
  const { rows: [report] } = await db.as("chat_operator", null, (c) => c.query<{ r: { webhook_deliveries: number } }>(
    "select chat_private.operator_delete_chat($1) as r", [chat!.chat_id]), true);
  assert.is(report!.r.webhook_deliveries, 1);
  assert.equal(await leftovers(db, [chat!.chat_id], [], requestIds), {});
  assert.is(await count(db, "select 1 from chat_private.webhook_endpoints where id = $1", [endpoint!.id]), 1);
  await db.pool.query("delete from chat_private.webhook_endpoints where id = $1", [endpoint!.id]);
});

test("a poller of a deleted chat's structured request reads REQUEST_DELETED (SODEL); anyone else NOT_FOUND (SONTF)", async () => {
  const chat = await busyChat();
  const find = (user: string, id: string) =>
    db.as("chat_user", user, (c) => c.query("select (chat_public.find_structured_output_request($1)).status", [id]));
  assert.is((await find(owner, chat.requestIds[0]!)).rows[0].status, "pending");
  assert.is(await sqlState(find(other, chat.requestIds[0]!)), "SONTF");
  await db.as("chat_user", owner, (c) => c.query("select chat_public.delete_chat($1)", [chat.chatId]), true);
  for (const id of chat.requestIds) assert.is(await sqlState(find(owner, id)), "SODEL");
  assert.is(await sqlState(find(other, chat.requestIds[0]!)), "SONTF");
  assert.is(await sqlState(find(owner, "00000000-0000-4000-8000-000000000000")), "SONTF");
});

test("another user's delete is refused with CHNTF and changes nothing; anonymous gets NOAUT", async () => {
  const chat = await createChat(db, owner, "mine");
  assert.is(await sqlState(db.as("chat_user", other, (c) => c.query("select chat_public.delete_chat($1)", [chat.chat_id]))), "CHNTF");
  assert.is(await sqlState(db.as("chat_anonymous", null, (c) => c.query("select chat_public.delete_chat($1)", [chat.chat_id]))), "NOAUT");
  assert.is(await count(db, "select 1 from chat_public.chats where id = $1", [chat.chat_id]), 1);
  assert.is(await count(db, "select 1 from chat_public.chat_messages where chat_id = $1", [chat.chat_id]), 1);
});

test("roles: clients cannot delete rows directly, workers cannot delete, operators only through their function", async () => {
  const chat = await createChat(db, owner, "roles");
  for (const role of ["chat_user", "chat_anonymous", "chat_worker", "chat_operator"]) {
    assert.is(await sqlState(db.as(role, owner, (c) => c.query("delete from chat_public.chats where id = $1", [chat.chat_id]))), "42501", role);
  }
  for (const role of ["chat_worker", "chat_operator"]) {
    assert.is(await sqlState(db.as(role, owner, (c) => c.query("select chat_public.delete_chat($1)", [chat.chat_id]))), "42501", role);
  }
  for (const role of ["chat_user", "chat_anonymous", "chat_worker"]) {
    assert.is(await sqlState(db.as(role, owner, (c) => c.query("select chat_private.operator_delete_chat($1)", [chat.chat_id]))), "42501", role);
  }
  const { rows } = await db.as("chat_operator", null, (c) => c.query("select chat_private.operator_delete_chat($1) as report", [chat.chat_id]), true);
  assert.equal({ chats: rows[0].report.chats, messages: rows[0].report.messages }, { chats: 1, messages: 1 });
  assert.equal(await leftovers(db, [chat.chat_id]), {});
  assert.is(await sqlState(db.as("chat_operator", null, (c) => c.query("select chat_private.operator_delete_chat($1)", [chat.chat_id]))), "CHNTF");
});

test("an operator's delete of a user who does not exist is refused with USNTF and removes nothing", async () => {
  const before = await db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.users");
  assert.is(await sqlState(db.as("chat_operator", null, (c) => c.query("select chat_private.operator_delete_user(gen_random_uuid())"))), "USNTF");
  const after = await db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.users");
  assert.equal(after.rows, before.rows);
});

test("an archived chat is deleted like any other; a child chat alone leaves its parent", async () => {
  const archived = await createChat(db, owner, "old");
  const fence = await acquire(db, archived.chat_id);
  await db.pool.query("select chat_private.finish_turn($1, $2, $3, $4, null)", [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt]);
  await archiveChat(db, owner, archived.chat_id);
  await db.as("chat_user", owner, (c) => c.query("select chat_public.delete_chat($1)", [archived.chat_id]), true);
  assert.equal(await leftovers(db, [archived.chat_id]), {});
  const chat = await busyChat();
  await db.as("chat_user", owner, (c) => c.query("select chat_public.delete_chat($1)", [chat.childId]), true);
  assert.equal(await leftovers(db, [chat.childId]), {});
  assert.is(await count(db, "select 1 from chat_public.chats where id = $1", [chat.chatId]), 1);
});

test("a stale runner's commit into a deleted chat is refused and writes nothing", async () => {
  const chat = await createChat(db, owner, "run");
  const fence = await acquire(db, chat.chat_id);
  await db.as("chat_user", owner, (c) => c.query("select chat_public.delete_chat($1)", [chat.chat_id]), true);
  assert.is(await sqlState(commitStep(db, fence, [assistantText("late")])), "CHNTF");
  assert.equal(await leftovers(db, [chat.chat_id]), {});
});

test.run();
