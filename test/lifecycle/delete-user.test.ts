// Deleting through the API and the operator commands: GraphQL deleteChat and findStructuredOutputRequest with their
// error codes, `chatd ops delete-chat`, and `chatd ops delete-user`, after which the user's token is refused.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { signToken } from "../../src/api/auth.ts";
import { envelope, startTestApi, subscribe, textContent, type TestApi } from "../api/harness.ts";
import { count, setStructuredExperiment } from "../support/chats.ts";
import { runChatd } from "../support/cli.ts";
import { leftovers } from "./support.ts";

let t: TestApi;

test.before(async () => {
  t = await startTestApi();
  await setStructuredExperiment(t.db, true);
});
test.after(async () => {
  await t.close();
});

const CREATE = `mutation($content: JSON!, $rf: String) { createChat(input: {content: $content, responseFormat: $rf}) {
  result { chatId structuredOutputRequestId } } }`;
const DELETE = `mutation($id: UUID!) { deleteChat(input: {chatId: $id}) { result } }`;
const FIND = `query($id: UUID!) { findStructuredOutputRequest(requestId: $id) { status } }`;
const CHATS = `query { allChats { totalCount } }`;

type Created = { createChat: { result: { chatId: string; structuredOutputRequestId: string | null } } };

async function createChat(token: string, rf: string | null = null) {
  const response = await t.gql<Created>(CREATE, { content: textContent("hello"), rf }, token);
  assert.is(response.errors, undefined, JSON.stringify(response.errors));
  return response.data!.createChat.result;
}

const code = (response: { errors?: { extensions?: { code?: string } }[] }) => response.errors?.[0]?.extensions?.code;

test("GraphQL deleteChat: the owner's works, anyone else's is NOT_FOUND; a deleted chat's request is REQUEST_DELETED", async () => {
  const alice = await t.user("alice-api");
  const bob = await t.user("bob-api");
  const chat = await createChat(alice.token, envelope());
  assert.is((await t.gql(FIND, { id: chat.structuredOutputRequestId }, alice.token)).data?.findStructuredOutputRequest != null, true);
  const refused = await t.gql(DELETE, { id: chat.chatId }, bob.token);
  assert.is(code(refused), "NOT_FOUND", JSON.stringify(refused));
  assert.is(code(await t.gql(DELETE, { id: chat.chatId }, null)), "UNAUTHENTICATED");
  assert.is(await count(t.db, "select 1 from chat_public.chats where id = $1", [chat.chatId]), 1);
  const deleted = await t.gql<{ deleteChat: { result: string } }>(DELETE, { id: chat.chatId }, alice.token);
  assert.is(deleted.data?.deleteChat.result, chat.chatId);
  assert.equal(await leftovers(t.db, [chat.chatId]), {});
  assert.is(code(await t.gql(FIND, { id: chat.structuredOutputRequestId }, alice.token)), "REQUEST_DELETED");
  assert.is(code(await t.gql(FIND, { id: chat.structuredOutputRequestId }, bob.token)), "NOT_FOUND");
  assert.is(code(await t.gql(DELETE, { id: chat.chatId }, alice.token)), "NOT_FOUND", "a second delete finds nothing");
});

test("a client following the chat's events is told it is gone (NOT_FOUND)", async () => {
  const frank = await t.user("frank-stream");
  const chat = await createChat(frank.token);
  const events = subscribe(t.ws(frank.token), `subscription($chatId: UUID!) { chatEvents(chatId: $chatId) { type status } }`,
    { chatId: chat.chatId });
  try {
    const first = await events.next();
    assert.is(first.errors, undefined, JSON.stringify(first.errors));
    await t.gql(DELETE, { id: chat.chatId }, frank.token);
    // graphql-ws delivers a refusal raised inside the stream as the subscription's error: a list of GraphQL errors.
    const ended = await (async () => {
      for (;;) {
        const event = await events.next().catch((error: unknown) => ({ errors: error as { extensions?: { code?: string } }[] }));
        if (event.errors != null) return event;
      }
    })();
    assert.is(code(ended), "NOT_FOUND", JSON.stringify(ended));
  } finally {
    events.dispose();
  }
});

test("the useChat endpoint: DELETE /api/chat/<id> deletes the owner's chat; anyone else's is 404", async () => {
  const gina = await t.user("gina-ui");
  const hal = await t.user("hal-ui");
  const chat = await createChat(gina.token);
  const remove = (token: string) => fetch(`${t.api.url}/api/chat/${chat.chatId}`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
  const refused = await remove(hal.token);
  assert.is(refused.status, 404, await refused.text());
  assert.is(await count(t.db, "select 1 from chat_public.chats where id = $1", [chat.chatId]), 1);
  const deleted = await remove(gina.token);
  assert.is(deleted.status, 200);
  assert.equal(await deleted.json(), { chatId: chat.chatId, deleted: true });
  assert.equal(await leftovers(t.db, [chat.chatId]), {});
  assert.is((await remove(gina.token)).status, 404);
});

test("chatd ops delete-chat deletes any user's chat and prints what went", async () => {
  const carol = await t.user("carol-ops");
  const chat = await createChat(carol.token);
  const bad = await runChatd(["ops", "delete-chat", "not-a-uuid"], t.db.url);
  assert.is.not(bad.code, 0);
  const run = await runChatd(["ops", "delete-chat", chat.chatId], t.db.url);
  assert.is(run.code, 0, run.out);
  assert.match(run.out, `deleted chat ${chat.chatId}`);
  assert.match(run.out, /messages: 1/);
  assert.equal(await leftovers(t.db, [chat.chatId]), {});
  const again = await runChatd(["ops", "delete-chat", chat.chatId], t.db.url);
  assert.is.not(again.code, 0);
  assert.match(again.out, /chat not found/);
});

test("chatd ops delete-user removes every chat, batch and key of the user; the user's token is refused at once", async () => {
  const dave = await t.user("dave-gone");
  const erin = await t.user("erin-stays");
  const chats = [await createChat(dave.token), await createChat(dave.token, envelope())];
  const kept = await createChat(erin.token);
  const batch = await t.gql(`mutation($rf: String!, $items: JSON!) { createBatch(input: {responseFormat: $rf, items: $items}) {
    result { rowId } } }`, { rf: envelope(), items: [{ line: 1, content: textContent("one") }] }, dave.token);
  assert.is(batch.errors, undefined, JSON.stringify(batch.errors));
  assert.is((await t.gql<{ allChats: { totalCount: number } }>(CHATS, {}, dave.token)).data?.allChats.totalCount, 2);
  await t.db.pool.query("select chat_private.webhook_add($1, 'https://receiver.example/dave', null, $2)",
    [dave.id, `whsec_${Buffer.alloc(32, 5).toString("base64")}`]);

  assert.is.not((await runChatd(["ops", "delete-user", "dave-gone"], t.db.url)).code, 0, "--yes is required");
  assert.is(await count(t.db, "select 1 from chat_public.users where id = $1", [dave.id]), 1);
  const run = await runChatd(["ops", "delete-user", "dave-gone", "--yes"], t.db.url);
  assert.is(run.code, 0, run.out);
  assert.match(run.out, "deleted user dave-gone");
  assert.match(run.out, /chats: 2/);
  assert.match(run.out, /batches: 1/);
  assert.match(run.out, /tokens: refused/);
  assert.match(run.out, /webhook_endpoints: 1/);
  assert.is(await count(t.db, "select 1 from chat_private.webhook_endpoints where owner_id = $1", [dave.id]), 0);

  assert.equal(await leftovers(t.db, chats.map((c) => c.chatId)), {});
  assert.is(await count(t.db, "select 1 from chat_public.batches where owner_id = $1", [dave.id]), 0);
  assert.is(await count(t.db, "select 1 from chat_private.deleted_requests where owner_id = $1", [dave.id]), 0);
  assert.is(await count(t.db, "select 1 from chat_public.users where id = $1", [dave.id]), 0);
  // The token: every write refused, nothing readable, and a new user of the same name is someone else.
  assert.is(code(await t.gql(CREATE, { content: textContent("still here?") }, dave.token)), "UNAUTHENTICATED");
  assert.is(code(await t.gql(FIND, { id: chats[1]!.structuredOutputRequestId }, dave.token)), "UNAUTHENTICATED");
  assert.is((await t.gql<{ allChats: { totalCount: number } }>(CHATS, {}, dave.token)).data?.allChats.totalCount, 0);
  const again = await t.user("dave-gone");
  assert.is.not(again.id, dave.id);
  await createChat(again.token);
  assert.is((await t.gql<{ allChats: { totalCount: number } }>(CHATS, {}, dave.token)).data?.allChats.totalCount, 0);
  assert.is(code(await t.gql(CREATE, { content: textContent("x") }, signToken(t.secret, dave.id))), "UNAUTHENTICATED");
  // Nobody else lost anything.
  assert.is((await t.gql<{ allChats: { totalCount: number } }>(CHATS, {}, erin.token)).data?.allChats.totalCount, 1);
  assert.is(await count(t.db, "select 1 from chat_public.chats where id = $1", [kept.chatId]), 1);
  const unknown = await runChatd(["ops", "delete-user", "nobody-here", "--yes"], t.db.url);
  assert.is.not(unknown.code, 0);
  assert.match(unknown.out, /no user named nobody-here/);
});

test.run();
