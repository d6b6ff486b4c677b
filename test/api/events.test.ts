// The chatEvents subscription over graphql-ws against the real server: receipts committed by SQL arrive as
// message events (byte-exact valueJson), a queue deletion during a held turn delivers its receipt without
// previewReset, reconnecting with afterMessageId delivers exactly the missed rows, and part deltas (pg_notify
// here; the worker publishes them) are ordered by episode.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, commitCandidate, finishTurn } from "../support/chats.ts";
import { envelope, startTestApi, subscribe, textContent, type EventQueue, type GraphQLResponse, type TestApi } from "./harness.ts";

const EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type historyVersion generationAttempt status queue { rowId structuredOutputRequestId }
  message { rowId kind structuredOutputRequestId structuredOutput { status valueJson error { code } } }
  part { historyVersion generationAttempt seq data } } }`;

interface Event {
  type: string;
  historyVersion: string;
  generationAttempt: string;
  status: string | null;
  queue: { rowId: string; structuredOutputRequestId: string | null }[];
  message: { rowId: string; kind: string; structuredOutputRequestId: string | null;
    structuredOutput: { status: string; valueJson: string | null; error: { code: string } | null } | null } | null;
  part: { historyVersion: string; generationAttempt: string; seq: string; data: Record<string, unknown> } | null;
}

let t: TestApi;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
});
test.after(async () => { await t.close(); });

async function create(rf: string | null = null) {
  const response = await t.gql<{ createChat: { result: { chatId: string; messageId: string; structuredOutputRequestId: string | null } } }>(
    `mutation($c: JSON!, $rf: String) { createChat(input: {content: $c, responseFormat: $rf}) { result { chatId messageId structuredOutputRequestId } } }`,
    { c: textContent("start"), rf }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.createChat.result;
}

async function next(queue: EventQueue<GraphQLResponse<{ chatEvents: Event }>>): Promise<Event> {
  const response = await queue.next();
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.chatEvents;
}

/** Takes events until one matches, returning the skipped ones too. */
async function until(queue: EventQueue<GraphQLResponse<{ chatEvents: Event }>>, match: (event: Event) => boolean) {
  const seen: Event[] = [];
  for (;;) {
    const event = await next(queue);
    seen.push(event);
    if (match(event)) return seen;
  }
}

test("replay, then a receipt committed by SQL arrives as a message event with the exact valueJson", async () => {
  const chat = await create(envelope());
  const events = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId });
  const initial = await until(events, (event) => event.type === "message");
  assert.is(initial[0]!.type, "status");
  assert.is(initial[0]!.status, "RUNNING");
  assert.is(initial[1]!.message!.rowId, chat.messageId);
  const valueText = '{"id": 12345678901234567890123, "ratio": 0.3333333333333333333333333}';
  const fence = await commitCandidate(t.db, await acquire(t.db, chat.chatId), valueText);
  await finishTurn(t.db, fence);
  const { rows } = await t.db.pool.query<{ text: string }>("select ($1::jsonb)::text as text", [valueText]);
  const seen = await until(events, (event) => event.message?.kind === "RECEIPT");
  const receipt = seen[seen.length - 1]!.message!;
  assert.equal(receipt.structuredOutput, { status: "SUCCEEDED", valueJson: rows[0]!.text, error: null });
  assert.is(receipt.structuredOutputRequestId, chat.structuredOutputRequestId);
  const status = await until(events, (event) => event.type === "status");
  assert.is(status[status.length - 1]!.status, "WAITING");
  events.dispose();
});

test("deleting a queued structured request during a held turn delivers its receipt without previewReset", async () => {
  const chat = await create();
  await acquire(t.db, chat.chatId);
  const queued = await t.gql<{ sendChatMessage: { result: { queuedMessageId: string; structuredOutputRequestId: string } } }>(
    `mutation($id: UUID!, $c: JSON!, $rf: String) { sendChatMessage(input: {chatId: $id, content: $c, responseFormat: $rf}) {
      result { queuedMessageId structuredOutputRequestId } } }`, { id: chat.chatId, c: textContent("later"), rf: envelope() }, alice.token);
  const { queuedMessageId, structuredOutputRequestId } = queued.data!.sendChatMessage.result;
  const events = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId, after: chat.messageId });
  const [status] = await until(events, (event) => event.type === "status");
  const fence = [status!.historyVersion, status!.generationAttempt];
  const deleted = await t.gql(`mutation($q: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $q}) { result { receipts { rowId } } } }`,
    { q: queuedMessageId }, alice.token);
  assert.not.ok(deleted.errors, JSON.stringify(deleted.errors));
  const seen = await until(events, (event) => event.type === "queueUpdate");
  assert.equal(seen.map((event) => event.type), ["message", "queueUpdate"]);
  const receipt = seen[0]!.message!;
  assert.equal({ kind: receipt.kind, id: receipt.structuredOutputRequestId, code: receipt.structuredOutput?.error?.code },
    { kind: "RECEIPT", id: structuredOutputRequestId, code: "queue_deleted" });
  assert.equal([seen[1]!.historyVersion, seen[1]!.generationAttempt], fence, "the running turn keeps its fence");
  assert.equal(seen[1]!.queue, []);
  const { rows } = await t.db.pool.query("select status from chat_public.chats where id = $1", [chat.chatId]);
  assert.is(rows[0].status, "running");
  events.dispose();
});

test("reconnecting with afterMessageId delivers exactly the missed messages", async () => {
  const chat = await create();
  const first = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId });
  const replay = await until(first, (event) => event.type === "message");
  const last = replay[replay.length - 1]!.message!.rowId;
  first.dispose();
  let fence = await acquire(t.db, chat.chatId);
  const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
  const { commitStep } = await import("../support/chats.ts");
  fence = await commitStep(t.db, fence, [assistant("one"), assistant("two")], { steps: 1 });
  await commitStep(t.db, fence, [{ role: "system", visibility: "model", kind: "control", content: [{ type: "text", text: "hidden" }] }, assistant("three")], { steps: 1 });
  const { rows } = await t.db.pool.query<{ id: string }>(
    "select m.id::text from chat_public.chat_messages m where m.chat_id = $1 and m.id > $2 and m.visibility <> 'model' order by m.id",
    [chat.chatId, last]);
  const second = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId, after: last });
  const missed: string[] = [];
  while (missed.length < rows.length) {
    const event = await next(second);
    if (event.type === "message") missed.push(event.message!.rowId);
  }
  assert.equal(missed, rows.map((row) => row.id));
  second.dispose();
});

test("part deltas are tagged by episode; a new attempt resets the preview and stale deltas are dropped", async () => {
  const chat = await create();
  const events = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId, after: chat.messageId });
  const [status] = await until(events, (event) => event.type === "status");
  const fence = await acquire(t.db, chat.chatId);
  await until(events, (event) => event.type === "previewReset");
  const channel = `chatd:chat:${chat.chatId}:parts`;
  const notify = (history: string, attempt: string, seq: number, text: string) => t.db.pool.query("select pg_notify($1, $2)",
    [channel, JSON.stringify({ history_version: Number(history), generation_attempt: Number(attempt), seq, delta: { type: "text-delta", text } })]);
  await notify(status!.historyVersion, status!.generationAttempt, 1, "stale");
  await notify(fence.historyVersion, fence.generationAttempt, 1, "Hel");
  await notify(fence.historyVersion, fence.generationAttempt, 2, "lo");
  const parts = await until(events, (event) => event.part?.seq === "2");
  assert.equal(parts.map((event) => [event.type, event.part?.data.delta]),
    [["messagePart", { type: "text-delta", text: "Hel" }], ["messagePart", { type: "text-delta", text: "lo" }]]);
  assert.equal([parts[0]!.part!.historyVersion, parts[0]!.part!.generationAttempt], [fence.historyVersion, fence.generationAttempt]);
  events.dispose();
});

test.run();
