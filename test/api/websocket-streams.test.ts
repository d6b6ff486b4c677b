// GraphQL subscriptions over websockets share the useChat streams' bounds (src/api/http/websocket-streams.ts): the
// per-user and per-process caps hold at N and refuse N + 1 (counting SSE streams and websocket operations together)
// and a finished subscription frees its slot; a subscription whose client stops reading is terminated at the send
// deadline and its slot freed; a socket is closed with 4401 when its token expires. No worker: chats are created
// and written in SQL.
import { once } from "node:events";
import { test } from "uvu";
import * as assert from "uvu/assert";
import WebSocket from "ws";
import { signToken } from "../../src/api/auth.ts";
import { createChat, createUser } from "../support/chats.ts";
import { waitFor } from "../support/wait.ts";
import { startTestApi, subscribe, type TestApi } from "./harness.ts";

const EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type message { rowId content } } }`;
const LIMITS = { perUser: 2, perProcess: 3, sendDeadlineMs: 500 };
let t: TestApi;

test.before(async () => {
  t = await startTestApi({ streamLimits: LIMITS });
});
test.after(() => t.close());

async function userWithChat(name: string, tokenSeconds?: number): Promise<{ token: string; chatId: string }> {
  const id = await createUser(t.db, name);
  const chat = await createChat(t.db, id, "hello");
  return { token: signToken(t.secret, id, tokenSeconds), chatId: chat.chat_id };
}

/** Subscribes and waits for the first event: its type, or the code the operation was refused with. */
async function open(token: string, chatId: string) {
  const events = subscribe<{ chatEvents: { type: string } }>(t.ws(token), EVENTS, { chatId });
  const first = await events.next().then((event) => event.data!.chatEvents.type,
    (errors: { extensions?: { code?: string } }[]) => `refused: ${errors[0]?.extensions?.code}`);
  return { events, first };
}

test("caps: N subscriptions per user and per process are served, N + 1 is TOO_MANY_STREAMS; ending one frees its slot", async () => {
  const alice = await userWithChat("alice-cap");
  const bob = await userWithChat("bob-cap");
  const a1 = await open(alice.token, alice.chatId);
  const a2 = await open(alice.token, alice.chatId);
  assert.is(a1.first, "status");
  assert.is(t.api.openStreams(), LIMITS.perUser);
  const refusedUser = await open(alice.token, alice.chatId);
  assert.is(refusedUser.first, "refused: TOO_MANY_STREAMS");
  const b1 = await open(bob.token, bob.chatId);
  assert.is(b1.first, "status", "bob is within his cap and the process's");
  const refusedProcess = await open(bob.token, bob.chatId);
  assert.is(refusedProcess.first, "refused: TOO_MANY_STREAMS");
  // The useChat streams count against the same slots.
  const sse = await fetch(`${t.api.url}/api/chat/${bob.chatId}/stream`, { headers: { authorization: `Bearer ${bob.token}` } });
  assert.is(sse.status, 429);

  a1.events.dispose();
  await waitFor("alice's slot back", async () => t.api.openStreams() === LIMITS.perProcess - 1);
  const again = await open(alice.token, alice.chatId);
  assert.is(again.first, "status");
  for (const each of [a2, b1, again]) each.events.dispose();
  await waitFor("every slot back", async () => t.api.openStreams() === 0);
});

test("a subscriber that stops reading is terminated at the send deadline and its slot is freed", async () => {
  const carol = await userWithChat("carol-deadline");
  // 24 rows of 1 MiB: far more than loopback's socket buffers hold, so the sends stall.
  await t.db.pool.query(
    `insert into chat_public.chat_messages (chat_id, role, kind, content)
     select $1, 'assistant', 'message', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('x', 1048576)))
     from generate_series(1, 24)`, [carol.chatId]);
  const socket = new WebSocket(t.api.graphqlUrl.replace(/^http/, "ws"), "graphql-transport-ws");
  await once(socket, "open");
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${carol.token}` } }));
  await once(socket, "message");
  socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: EVENTS, variables: { chatId: carol.chatId } } }));
  const [first] = await once(socket, "message") as [Buffer];
  assert.is(JSON.parse(first.toString()).payload.data.chatEvents.type, "status");
  // The client reads no more.
  (socket as unknown as { _socket: { pause(): void } })._socket.pause();
  assert.is(t.api.openStreams(), 1);
  await waitFor("the stalled subscription dropped", async () => t.api.openStreams() === 0, 20_000);
  socket.terminate();
});

test("a socket whose token expires is closed with 4401, its subscriptions ended and their slots freed", async () => {
  const dave = await userWithChat("dave-expiry", 2);
  const socket = new WebSocket(t.api.graphqlUrl.replace(/^http/, "ws"), "graphql-transport-ws");
  await once(socket, "open");
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${dave.token}` } }));
  await once(socket, "message");
  const closed = once(socket, "close") as Promise<[number, Buffer]>;
  socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: EVENTS, variables: { chatId: dave.chatId } } }));
  await once(socket, "message");
  assert.is(t.api.openStreams(), 1);
  const [code, reason] = await closed;
  assert.is(code, 4401);
  assert.match(reason.toString(), /token expired/);
  await waitFor("dave's slot back", async () => t.api.openStreams() === 0);
});

test.run();
