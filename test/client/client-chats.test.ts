// client.chats.* and client.events against the real server without a worker (the test drives the turn through the
// worker transitions): every mutation's result as the client returns it, receipts by kind, and an event stream
// that rides out dropped sockets without repeating or skipping a message.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ChatdRequestError, createChatdClient, type ChatdClient, type ChatEvent } from "@chatd/client";
import { acquire, assistantText, commitStep, enterRequiresAction, finishTurn } from "../support/chats.ts";
import { envelope, startTestApi, type TestApi } from "../api/harness.ts";
import { startProxy, type Proxy } from "./proxy.ts";

let t: TestApi;
let proxy: Proxy;
let client: ChatdClient;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  proxy = await startProxy(t.api.graphqlUrl);
  client = createChatdClient({ url: proxy.url, token: alice.token });
});
test.after(async () => {
  await client.close();
  await proxy.close();
  await t.close();
});

test("create, send (queued), promote, delete (receipt), edit, interrupt: the client's results match the database", async () => {
  const created = await client.chats.create({ prompt: "hello", title: "t" });
  assert.type(created.messageId, "string");
  assert.is(created.queuedMessageId, null);
  assert.equal(created.receiptMessageIds, []);
  const a = await client.chats.send(created.chatId, { prompt: "a" });
  const b = await client.chats.send(created.chatId, { prompt: "b", responseFormat: envelope() });
  assert.is(a.messageId, null, "the chat is busy: the message is queued");
  assert.type(a.queuedMessageId, "string");
  assert.type(b.structuredOutputRequestId, "string");
  await client.chats.promoteQueued(b.queuedMessageId!);
  const { rows: queue } = await t.db.pool.query<{ id: string }>(
    "select id::text from chat_public.chat_queued_messages where chat_id = $1 order by position", [created.chatId]);
  assert.equal(queue.map((row) => row.id), [b.queuedMessageId, a.queuedMessageId]);
  const deleted = await client.chats.deleteQueued(b.queuedMessageId!);
  assert.is(deleted.receiptMessageIds.length, 1);
  const receipts = await client.chats.messages(created.chatId, { kind: "receipt" });
  assert.equal(receipts.map((m) => [m.rowId, m.kind, m.structuredOutput?.status, m.structuredOutput?.error?.code]),
    [[deleted.receiptMessageIds[0], "receipt", "canceled", "queue_deleted"]]);
  const all = await client.chats.messages(created.chatId);
  assert.equal(all.map((m) => m.rowId), [created.messageId, deleted.receiptMessageIds[0]]);
  const edited = await client.chats.edit(created.messageId!, { prompt: "hello again" });
  assert.is.not(edited.messageId, created.messageId);
  const interrupted = await client.chats.interrupt(created.chatId);
  assert.is(interrupted.chatId, created.chatId);
  const { rows } = await t.db.pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [created.chatId]);
  assert.is(interrupted.status, rows[0]!.status);
  assert.equal((await client.chats.get(created.chatId))?.status, rows[0]!.status);
});

test("submitToolResults answers the pending calls; a mismatch is a typed refusal with validations", async () => {
  const tool = { name: "lookup", description: "look up", input_schema: { type: "object" } };
  const created = await client.chats.create({ prompt: "use the tool", dynamicTools: [tool] });
  let fence = await acquire(t.db, created.chatId);
  fence = await commitStep(t.db, fence, [{ role: "assistant", content: [{ type: "tool-call", tool_call_id: "c1", tool_name: "lookup", args: {} }] }],
    { steps: 1 });
  await enterRequiresAction(t.db, fence, [{ tool_call_id: "c1", tool_name: "lookup" }]);
  const waiting = await client.chats.get(created.chatId);
  assert.equal(waiting?.pendingToolCalls, [{ tool_call_id: "c1", tool_name: "lookup" }]);
  try {
    await client.chats.submitToolResults(created.chatId, [{ toolCallId: "nope", result: 1 }]);
    assert.unreachable("results for other calls are refused");
  } catch (error) {
    assert.instance(error, ChatdRequestError);
    assert.is((error as ChatdRequestError).code, "TOOL_RESULTS_MISMATCH");
    assert.equal((error as ChatdRequestError).validations.map((v) => v.field), ["results"]);
  }
  const resumed = await client.chats.submitToolResults(created.chatId, [{ toolCallId: "c1", result: { answer: 42 } }]);
  assert.is(resumed.status, "running");
  const tools = await client.chats.messages(created.chatId, { afterId: created.messageId });
  const result = tools.at(-1)!.content[0]!;
  assert.equal([result.type, result.tool_call_id, result.result], ["tool-result", "c1", { answer: 42 }]);
});

/** The next `count` message ids from the iterator; also whether a reconnect was announced on the way. */
async function collect(events: AsyncIterator<ChatEvent>, count: number): Promise<{ ids: string[]; reconnected: boolean }> {
  const ids: string[] = [];
  let reconnected = false;
  while (ids.length < count) {
    const { value, done } = await events.next();
    if (done) throw new Error("the stream ended");
    if (value.type === "message") ids.push(value.message!.rowId);
    if (value.reconnected) reconnected = true;
  }
  return { ids, reconnected };
}

test("events ride out dropped sockets: every message once, in order, and a previewReset marks the reconnect", async () => {
  const created = await client.chats.create({ prompt: "start" });
  let fence = await acquire(t.db, created.chatId);
  const events = client.events(created.chatId)[Symbol.asyncIterator]();
  const first = await events.next();
  assert.is(first.value.type, "status", "the stream has read the chat");
  const seen = [(await events.next()).value.message!.rowId];
  assert.equal(seen, [created.messageId]);
  const before = proxy.accepted();
  proxy.cut();
  for (let i = 0; i < 5; i++) fence = await commitStep(t.db, fence, [assistantText(`while away ${i}`)], { steps: 1 });
  proxy.resume();
  for (let i = 0; i < 3; i++) fence = await commitStep(t.db, fence, [assistantText(`after ${i}`)], { steps: 1 });
  await finishTurn(t.db, fence);
  const { rows } = await t.db.pool.query<{ id: string }>(
    "select m.id::text from chat_public.chat_messages m where m.chat_id = $1 and m.visibility <> 'model' order by m.id", [created.chatId]);
  // A repeat or a skip shows up as a different list of the same length.
  const rest = await collect(events, rows.length - seen.length);
  assert.equal([...seen, ...rest.ids], rows.map((row) => row.id));
  assert.ok(rest.reconnected, "the reconnect is announced with previewReset");
  assert.ok(proxy.accepted() > before, "the client opened a new connection");
  await events.return?.();
});

test("events for a chat that is not yours end with NOT_FOUND instead of retrying", async () => {
  const bob = await t.user("bob");
  const bobs = createChatdClient({ url: proxy.url, token: bob.token });
  const created = await client.chats.create({ prompt: "mine" });
  try {
    for await (const _event of bobs.events(created.chatId)) assert.unreachable("no event for another user's chat");
    assert.unreachable("the stream is refused");
  } catch (error) {
    assert.instance(error, ChatdRequestError);
    assert.is((error as ChatdRequestError).code, "NOT_FOUND");
  } finally {
    await bobs.close();
  }
});

test.run();
