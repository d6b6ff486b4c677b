// Streams of the useChat endpoint under a caller who holds them (issue: no cap, no expiry): a user's streams are
// capped (N granted, N + 1 refused with 429 before any effect, a closed one frees its slot), and a stream opened
// with a token ends when that token expires, while the turn still runs. Mock provider held with a barrier.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { signToken } from "../../src/api/auth.ts";
import { startApi, type ApiServer } from "../../src/api/server.ts";
import { barrier } from "../support/mock-providers/index.ts";
import { waitFor } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

let stack: LiveStack;
let api: ApiServer;
let alice: { id: string; token: string };

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  alice = stack.users.alice!;
  api = await startApi({ pool: stack.t.db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl: stack.t.apiDatabaseUrl, jwtSecret: stack.t.secret,
    development: false, streamLimits: { perUser: 2, perProcess: 10, sendDeadlineMs: 5_000 } });
});
test.after(async () => {
  await api?.close();
  await stack.close();
});

const chats = async () => (await stack.t.db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.chats")).rows[0]!.n;
const post = (body: object, token = alice.token, signal?: AbortSignal) => fetch(`${api.url}/api/chat`, {
  method: "POST", headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body), signal,
});
const resume = (chatId: string, token = alice.token, signal?: AbortSignal) => fetch(`${api.url}/api/chat/${chatId}/stream`,
  { headers: { Authorization: `Bearer ${token}` }, signal });
const user = (text: string) => [{ id: "u1", role: "user", parts: [{ type: "text", text }] }];

test("a user's streams: N are granted, N + 1 is 429 TOO_MANY_STREAMS with no chat created, a closed one frees its slot; an expired token ends its stream", async () => {
  const release = barrier();
  const reached = barrier();
  stack.barriers.push(release);
  stack.server.enqueue({ text: ["Holding ", "on"], hold: { afterEvents: 1, release: release.promise, reached: () => reached.resolve() } });
  const first = new AbortController();
  const created = await post({ id: "held", messages: user("hold"), modelConfigId: "mock" }, alice.token, first.signal);
  assert.is(created.status, 200);
  await reached.promise;
  const { rows } = await stack.t.db.pool.query<{ id: string }>("select id from chat_public.chats where status = 'running'");
  const chatId = rows[0]!.id;

  const second = new AbortController();
  assert.is((await resume(chatId, alice.token, second.signal)).status, 200, "the second stream (N = 2)");
  const refused = await resume(chatId);
  assert.is(refused.status, 429, "the third");
  assert.is(refused.headers.get("retry-after"), "1");
  assert.is((await refused.json() as { error: { code: string } }).error.code, "TOO_MANY_STREAMS");
  const before = await chats();
  const refusedPost = await post({ id: "over-cap", messages: user("hi") });
  assert.is(refusedPost.status, 429);
  await refusedPost.arrayBuffer();
  assert.is(await chats(), before, "a refused stream had no effect");

  second.abort();
  await waitFor("the closed stream's slot", async () => api.openStreams() === 1);
  const third = new AbortController();
  assert.is((await resume(chatId, alice.token, third.signal)).status, 200, "the freed slot is granted");
  third.abort();
  await waitFor("the slot again", async () => api.openStreams() === 1);

  const shortLived = signToken(stack.t.secret, alice.id, 2);
  const expiring = await resume(chatId, shortLived);
  assert.is(expiring.status, 200);
  const text = await Promise.race([expiring.text(), new Promise<string>((_, reject) => setTimeout(() => reject(new Error("the stream outlived its token by 20 s")), 22_000))]);
  assert.match(text, /"type":"error","errorText":"the token expired; resume the stream with a fresh token"/);
  assert.match(text, /data: \[DONE\]\n\n$/);
  const { rows: still } = await stack.t.db.pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [chatId]);
  assert.is(still[0]!.status, "running", "the turn goes on; only the stream ended");

  release.resolve();
  first.abort();
  await waitFor("every stream closed", async () => api.openStreams() === 0);
});

test.run();
