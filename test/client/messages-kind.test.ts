// What a client reads besides the stream: a chat's receipts by `kind` (without fetching the transcript), and a root
// Query without the ChatInputResult helpers (they are fields of ChatInputResult only).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, deleteQueued, sendMessage, structured } from "../support/chats.ts";
import { envelope, startTestApi, textContent, type TestApi } from "../api/harness.ts";

let t: TestApi;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
});
test.after(async () => { await t.close(); });

test("messages(condition: {kind: RECEIPT}) returns only the chat's receipts, in id order", async () => {
  const created = await t.gql<{ createChat: { result: { chatId: string } } }>(
    `mutation($c: JSON!, $rf: String) { createChat(input: {content: $c, responseFormat: $rf}) { result { chatId } } }`,
    { c: textContent("start"), rf: envelope() }, alice.token);
  const chatId = created.data!.createChat.result.chatId;
  await acquire(t.db, chatId);
  const queued = [];
  for (let i = 0; i < 3; i++) queued.push((await sendMessage(t.db, alice.id, chatId, `q${i}`, structured())).queued_message_id!);
  for (const id of queued.reverse()) await deleteQueued(t.db, alice.id, id);
  const { rows } = await t.db.pool.query<{ id: string }>(
    "select m.id::text from chat_public.chat_messages m where m.chat_id = $1 and m.kind = 'receipt' order by m.id", [chatId]);
  assert.is(rows.length, 3);
  const response = await t.gql<{ chatByRowId: { all: { totalCount: number }; receipts: { nodes: { rowId: string; kind: string }[] } } }>(
    `query($id: UUID!) { chatByRowId(rowId: $id) { all: messages { totalCount }
       receipts: messages(condition: {kind: RECEIPT}) { nodes { rowId kind } } } }`, { id: chatId }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  const chat = response.data!.chatByRowId;
  assert.equal(chat.receipts.nodes, rows.map((row) => ({ rowId: row.id, kind: "RECEIPT" })));
  assert.ok(chat.all.totalCount > 3, "the transcript has more than the receipts");
  const byChat = await t.gql<{ chatByRowId: { chatMessagesByChatId: { nodes: { kind: string }[] } } }>(
    `query($id: UUID!) { chatByRowId(rowId: $id) { chatMessagesByChatId(condition: {kind: MESSAGE}) { nodes { kind } } } }`,
    { id: chatId }, alice.token);
  assert.not.ok(byChat.errors, JSON.stringify(byChat.errors));
  assert.ok(byChat.data!.chatByRowId.chatMessagesByChatId.nodes.every((node) => node.kind === "MESSAGE"));
});

test("the root Query has no chatInputResult* fields; ChatInputResult keeps them", async () => {
  const response = await t.gql<{ query: { fields: { name: string }[] }; result: { fields: { name: string }[] } }>(
    `query { query: __type(name: "Query") { fields { name } } result: __type(name: "ChatInputResult") { fields { name } } }`,
    {}, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  const root = response.data!.query.fields.map((field) => field.name);
  assert.equal(root.filter((name) => name.startsWith("chatInputResult")), []);
  const result = response.data!.result.fields.map((field) => field.name);
  for (const name of ["chat", "message", "queuedMessage", "receipts", "structuredOutputRequest"]) assert.ok(result.includes(name), name);
});

test.run();
