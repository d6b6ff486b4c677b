// Live acceptance of the GraphQL API with the real worker (mock provider servers on 127.0.0.1, never live APIs):
// a real API server, a Graphile Worker in the same process on the same test database, and a graphql-ws client.
// Part deltas published by the worker arrive as `messagePart` events (contiguous seq within an episode) and the
// structured receipt as a `message` event whose valueJson is byte-exact (big integers, long decimals), the same as
// a query reads it; a queued structured request deleted while an ordinary turn is held delivers its receipt without
// `previewReset` and the held turn's parts continue in the same episode; after a dynamic-tool pause, a client that
// disconnects and reconnects with `afterMessageId` gets exactly the messages it missed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Client } from "graphql-ws";
import { barrier, type Barrier, type MockProviderServer } from "../support/mock-providers/index.ts";
import { waitFor, waitForStatus } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "./live-stack.ts";
import { envelope, subscribe, textContent, type EventQueue, type GraphQLResponse, type TestApi } from "./harness.ts";

const EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type historyVersion generationAttempt status archived pendingToolCalls queue { rowId structuredOutputRequestId }
  message { rowId kind role structuredOutputRequestId structuredOutput { status valueJson error { code } } }
  part { historyVersion generationAttempt seq data } } }`;

const CREATE = `mutation($c: JSON!, $rf: String, $tools: JSON) {
  createChat(input: {content: $c, responseFormat: $rf, dynamicTools: $tools, modelConfigId: "mock"}) {
    result { chatId messageId structuredOutputRequestId } } }`;
const SEND = `mutation($id: UUID!, $c: JSON!, $rf: String) { sendChatMessage(input: {chatId: $id, content: $c, responseFormat: $rf}) {
  result { messageId queuedMessageId structuredOutputRequestId } } }`;
const MESSAGE = `query($id: BigInt!) { chatMessageByRowId(rowId: $id) { rowId kind structuredOutputRequestId
  structuredOutput { status valueJson error { code } } } }`;

interface Message {
  rowId: string;
  kind: string;
  role: string;
  structuredOutputRequestId: string | null;
  structuredOutput: { status: string; valueJson: string | null; error: { code: string } | null } | null;
}
interface Part { historyVersion: string; generationAttempt: string; seq: string; data: { kind?: string; delta?: string; [key: string]: unknown } }
interface Event {
  type: string;
  historyVersion: string;
  generationAttempt: string;
  status: string | null;
  archived: boolean | null;
  pendingToolCalls: { tool_call_id: string; tool_name: string }[] | null;
  queue: { rowId: string; structuredOutputRequestId: string | null }[];
  message: Message | null;
  part: Part | null;
}
type Events = EventQueue<GraphQLResponse<{ chatEvents: Event }>>;

const SCHEMA = { type: "object", properties: { n: { type: "integer" }, d: { type: "number" } }, required: ["n", "d"], additionalProperties: false };

let t: TestApi;
let server: MockProviderServer;
let alice: { id: string; token: string };
let stack: LiveStack;
let barriers: Barrier[];

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  ({ t, server, barriers } = stack);
  alice = stack.users.alice!;
});
test.after(() => stack.close());

function held(): { release: Barrier; reached: Barrier } {
  const release = barrier();
  const reached = barrier();
  barriers.push(release);
  return { release, reached };
}

async function gql<T>(query: string, variables: Record<string, unknown>, token = alice.token): Promise<T> {
  const response = await t.gql<T>(query, variables, token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!;
}

/** The next event, or a failure when none comes within the bound (a stuck stream fails the test, never hangs it). */
async function next(events: Events, boundMs = 30_000): Promise<Event> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no chatEvents event within ${boundMs} ms`)), boundMs);
  });
  const response = await Promise.race([events.next(), bound]).finally(() => clearTimeout(timer));
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.chatEvents;
}

/** Takes events until one matches, returning all taken (the match last). */
async function until(events: Events, match: (event: Event) => boolean): Promise<Event[]> {
  const seen: Event[] = [];
  for (;;) {
    const event = await next(events);
    seen.push(event);
    if (match(event)) return seen;
  }
}

/** The jsonb text PostgreSQL stores for a JSON text (key order and spacing normalized, every digit kept). */
async function jsonbText(text: string): Promise<string> {
  const { rows } = await t.db.pool.query<{ text: string }>("select ($1::jsonb)::text as text", [text]);
  return rows[0]!.text;
}

const episodeOf = (part: Part) => `${part.historyVersion}/${part.generationAttempt}`;
const seqs = (events: Event[]) => events.map((event) => Number(event.part!.seq));
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const joined = (parts: Event[], kind: string) => parts.filter((event) => event.part!.data.kind === kind).map((event) => event.part!.data.delta).join("");

/** A chat on the mock model that has finished one ordinary turn, and a subscription that has seen it idle. */
async function idleChat(client: Client, tools: object[] | null = null): Promise<{ chatId: string; events: Events; initial: Event }> {
  server.enqueue({ text: ["ready"] });
  const { createChat } = await gql<{ createChat: { result: { chatId: string } } }>(CREATE, { c: textContent("hello"), tools });
  const chatId = createChat.result.chatId;
  await waitForStatus(t.db, chatId, "waiting");
  const events: Events = subscribe<{ chatEvents: Event }>(client, EVENTS, { chatId });
  const [initial] = await until(events, (event) => event.type === "status");
  assert.is(initial!.status, "WAITING");
  return { chatId, events, initial: initial! };
}

test("(mock provider) a structured turn streams messagePart events, then its receipt arrives byte-exact; a query reads the same", async () => {
  const { chatId, events, initial } = await idleChat(t.ws(alice.token));
  const valueText = '{"n": 12345678901234567890123, "d": 0.10000000000000000000000000001}';
  const argsFragments = ['{"output":', '{"n": 12345678901234567890123, ', '"d": 0.10000000000000000000000000001}}'];
  const { release, reached } = held();
  // Events: role, "Looking ", "it up. " — then the hold, until the test has seen a published delta.
  server.enqueue({ text: ["Looking ", "it up. ", "Done."],
    toolCalls: [{ id: "final_1", name: "coder_structured_output", fragments: argsFragments }],
    hold: { afterEvents: 3, release: release.promise, reached: () => reached.resolve() } });
  const { sendChatMessage } = await gql<{ sendChatMessage: { result: { messageId: string | null; structuredOutputRequestId: string } } }>(
    SEND, { id: chatId, c: textContent("report the numbers"), rf: envelope("numbers", SCHEMA) });
  assert.ok(sendChatMessage.result.messageId, "an idle chat starts the turn at once");
  const requestId = sendChatMessage.result.structuredOutputRequestId;
  assert.ok(requestId);

  await reached.promise;
  const beforeRelease = await until(events, (event) => event.type === "messagePart");
  release.resolve();
  const rest = await until(events, (event) => event.message?.kind === "RECEIPT");
  const receiptEvent = rest[rest.length - 1]!.message!;
  const settled = await until(events, (event) => event.type === "status" && event.status === "WAITING");
  const all = [...beforeRelease, ...rest, ...settled];

  const parts = all.filter((event) => event.type === "messagePart");
  assert.ok(parts.length >= 2, `deltas before and after the hold (${parts.length})`);
  const episodes = new Set(parts.map((event) => episodeOf(event.part!)));
  assert.is(episodes.size, 1, `one model step, one episode: ${[...episodes].join(", ")}`);
  const [history, attempt] = [BigInt(parts[0]!.part!.historyVersion), BigInt(parts[0]!.part!.generationAttempt)];
  assert.ok(history > BigInt(initial.historyVersion) || (history === BigInt(initial.historyVersion) && attempt > BigInt(initial.generationAttempt)),
    "the parts belong to the new turn's episode");
  assert.equal(seqs(parts), oneToN(parts.length), "seq is contiguous from 1 within the episode");
  assert.is(joined(parts, "text"), "Looking it up. Done.");
  assert.is(joined(parts, "tool-input"), argsFragments.join(""), "the finalizer's argument text streamed verbatim");
  assert.ok(all.indexOf(parts[parts.length - 1]!) < all.findIndex((event) => event.message?.kind === "RECEIPT"), "deltas precede the receipt");

  const expected = await jsonbText(valueText);
  assert.ok(expected.includes("12345678901234567890123") && expected.includes("0.10000000000000000000000000001"));
  assert.equal(receiptEvent.structuredOutput, { status: "SUCCEEDED", valueJson: expected, error: null });
  assert.is(receiptEvent.structuredOutputRequestId, requestId);
  const queried = await gql<{ chatMessageByRowId: Omit<Message, "role"> }>(MESSAGE, { id: receiptEvent.rowId });
  assert.equal(queried.chatMessageByRowId, { rowId: receiptEvent.rowId, kind: "RECEIPT", structuredOutputRequestId: requestId,
    structuredOutput: { status: "SUCCEEDED", valueJson: expected, error: null } });
  events.dispose();
});

test("(mock provider) deleting a queued structured request during a held turn: receipt event, no previewReset, parts continue in the episode", async () => {
  const { chatId, events } = await idleChat(t.ws(alice.token));
  const { release, reached } = held();
  // Events: role, "partial ", "answer " — held — "continues ", "here.", finish.
  server.enqueue({ text: ["partial ", "answer ", "continues ", "here."],
    hold: { afterEvents: 3, release: release.promise, reached: () => reached.resolve() } });
  const from = server.requests.length;
  await gql(SEND, { id: chatId, c: textContent("an ordinary question"), rf: null });
  await reached.promise;
  const beforeHold = await until(events, (event) => event.type === "messagePart");
  const episode = episodeOf(beforeHold[beforeHold.length - 1]!.part!);

  const { sendChatMessage } = await gql<{ sendChatMessage: { result: { messageId: string | null; queuedMessageId: string; structuredOutputRequestId: string } } }>(
    SEND, { id: chatId, c: textContent("later, structured"), rf: envelope("later", SCHEMA) });
  assert.is(sendChatMessage.result.messageId, null, "a busy chat queues the message");
  const { queuedMessageId, structuredOutputRequestId } = sendChatMessage.result;
  const queuedSeen = await until(events, (event) => event.type === "queueUpdate" && event.queue.length === 1);
  assert.is(queuedSeen[queuedSeen.length - 1]!.queue[0]!.structuredOutputRequestId, structuredOutputRequestId);
  const deleted = await gql<{ deleteQueuedMessage: { result: { receipts: { rowId: string }[] } } }>(
    `mutation($q: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $q}) { result { receipts { rowId } } } }`, { q: queuedMessageId });
  const receiptSeen = await until(events, (event) => event.message?.kind === "RECEIPT");
  const emptied = await until(events, (event) => event.type === "queueUpdate");
  const duringHold = [...queuedSeen, ...receiptSeen, ...emptied];
  const receipt = receiptSeen[receiptSeen.length - 1]!.message!;
  assert.equal([receipt.rowId], deleted.deleteQueuedMessage.result.receipts.map((r) => r.rowId));
  assert.equal({ request: receipt.structuredOutputRequestId, status: receipt.structuredOutput?.status, code: receipt.structuredOutput?.error?.code },
    { request: structuredOutputRequestId, status: "CANCELED", code: "queue_deleted" });
  assert.equal(emptied[emptied.length - 1]!.queue, []);
  assert.not.ok(duringHold.some((event) => event.type === "previewReset" || event.type === "historyReset"),
    `no preview reset: ${duringHold.map((event) => event.type).join(",")}`);
  assert.ok(duringHold.every((event) => event.type !== "messagePart" || episodeOf(event.part!) === episode));
  assert.is(server.requests.length - from, 1, "the held request is still the provider's only call for this turn");

  release.resolve();
  const afterHold = await until(events, (event) => event.type === "status" && event.status === "WAITING");
  const all = [...beforeHold, ...duringHold, ...afterHold];
  const parts = all.filter((event) => event.type === "messagePart");
  assert.ok(afterHold.some((event) => event.type === "messagePart"), "deltas after the release");
  assert.ok(parts.every((event) => episodeOf(event.part!) === episode), "every part is in the held turn's episode");
  assert.equal(seqs(parts), oneToN(parts.length), "the sequence continues contiguously across the deletion");
  assert.is(joined(parts, "text"), "partial answer continues here.");
  const lastPart = all.lastIndexOf(parts[parts.length - 1]!);
  assert.not.ok(all.slice(all.indexOf(beforeHold[beforeHold.length - 1]!), lastPart).some((event) => event.type === "previewReset"),
    "no previewReset inside the episode");
  const assistant = afterHold.filter((event) => event.message?.role === "ASSISTANT");
  assert.is(assistant.length, 1, "the turn completed with one assistant message");
  const { rows } = await t.db.pool.query<{ text: string }>("select content -> 0 ->> 'text' as text from chat_public.chat_messages where id = $1",
    [assistant[0]!.message!.rowId]);
  assert.is(rows[0]!.text, "partial answer continues here.");
  events.dispose();
});

test("(mock provider) after a dynamic-tool pause, reconnecting with afterMessageId delivers exactly the missed messages and the receipt", async () => {
  const lookup = { name: "lookup", description: "client lookup", input_schema: { type: "object" } };
  const valueText = '{"n": 98765432109876543210987654321, "d": 2.00000000000000000000000000000000007}';
  server.enqueue(
    { toolCalls: [{ id: "lookup_1", name: "lookup", fragments: ['{"q":', '"x"}'] }] },
    { text: ["Found it."], toolCalls: [{ id: "final_2", name: "coder_structured_output", fragments: [`{"output":${valueText}}`] }] },
  );
  const { createChat } = await gql<{ createChat: { result: { chatId: string; structuredOutputRequestId: string } } }>(
    CREATE, { c: textContent("look it up"), rf: envelope("numbers", SCHEMA), tools: [lookup] });
  const { chatId, structuredOutputRequestId: requestId } = createChat.result;
  const first = t.ws(alice.token);
  const before = subscribe<{ chatEvents: Event }>(first, EVENTS, { chatId });
  const seen = await until(before, (event) => event.type === "actionRequired");
  const pending = seen[seen.length - 1]!.pendingToolCalls!;
  assert.equal(pending.map((call) => call.tool_name), ["lookup"]);
  const seenMessages = seen.filter((event) => event.type === "message").map((event) => event.message!.rowId);
  assert.ok(seenMessages.length >= 2, "the user message and the assistant's tool call");
  const last = seenMessages[seenMessages.length - 1]!;
  before.dispose();
  await first.dispose();

  await gql(`mutation($id: UUID!, $r: JSON!) { submitToolResults(input: {chatId: $id, results: $r}) { clientMutationId } }`,
    { id: chatId, r: [{ tool_call_id: pending[0]!.tool_call_id, result: "x means 42" }] });
  await waitForStatus(t.db, chatId, "waiting");
  const receiptId = await waitFor("the receipt", async () => (await gql<{ structuredOutputRequestByRowId: { receiptMessageId: string | null } }>(
    `query($id: UUID!) { structuredOutputRequestByRowId(rowId: $id) { receiptMessageId } }`, { id: requestId }))
    .structuredOutputRequestByRowId.receiptMessageId ?? undefined);
  const listed = await gql<{ chatByRowId: { chatMessagesByChatId: { nodes: { rowId: string }[] } } }>(
    `query($id: UUID!) { chatByRowId(rowId: $id) { chatMessagesByChatId(first: 1000) { nodes { rowId } } } }`, { id: chatId });
  const missedByQuery = listed.chatByRowId.chatMessagesByChatId.nodes.map((node) => node.rowId)
    .filter((id) => BigInt(id) > BigInt(last)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  assert.ok(missedByQuery.includes(receiptId), "the receipt is among the missed messages");
  assert.ok(missedByQuery.length >= 3, `tool result, assistant step and receipt were missed (${missedByQuery.join(",")})`);

  const after = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId, after: last });
  // A later transition marks the end of the replay: archiving emits a status event after any replayed message.
  const [initial] = await until(after, (event) => event.type === "status");
  assert.is(initial!.status, "WAITING");
  await gql(`mutation($id: UUID!) { archiveChat(input: {chatId: $id}) { clientMutationId } }`, { id: chatId });
  const replay = await until(after, (event) => event.type === "status" && event.archived === true);
  const replayed = replay.filter((event) => event.type === "message").map((event) => event.message!);
  assert.equal(replayed.map((message) => message.rowId), missedByQuery, "exactly the missed messages, in order");
  const receipt = replayed.find((message) => message.kind === "RECEIPT")!;
  const expected = await jsonbText(valueText);
  assert.ok(expected.includes("98765432109876543210987654321") && expected.includes("2.00000000000000000000000000000000007"));
  assert.equal({ id: receipt.rowId, request: receipt.structuredOutputRequestId, output: receipt.structuredOutput },
    { id: receiptId, request: requestId, output: { status: "SUCCEEDED", valueJson: expected, error: null } });
  const queried = await gql<{ chatMessageByRowId: Omit<Message, "role"> }>(MESSAGE, { id: receiptId });
  assert.equal(queried.chatMessageByRowId.structuredOutput, receipt.structuredOutput);
  after.dispose();
});

test.run();
