// The tenancy boundary over GraphQL: every id a client can pass, owned by one user, looked up or acted on by
// another user and by an anonymous caller. Reads find nothing; mutations are refused with NOT_FOUND (or
// UNAUTHENTICATED for the anonymous caller) and change nothing; the owner's own row is the allowed control.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, dynamicTool, enterRequiresAction } from "../support/chats.ts";
import { envelope, startTestApi, textContent, type GraphQLResponse, type TestApi } from "../api/harness.ts";

let t: TestApi;
let owner: { id: string; token: string };
let other: { id: string; token: string };
const ids: Record<string, string> = {};

test.before(async () => {
  t = await startTestApi();
  owner = await t.user("tenant-a");
  other = await t.user("tenant-b");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  const created = await t.gql<{ createChat: { result: { chatId: string; messageId: string; structuredOutputRequestId: string } } }>(
    `mutation($c: JSON!, $t: JSON, $rf: String) { createChat(input: {content: $c, dynamicTools: $t, responseFormat: $rf}) {
      result { chatId messageId structuredOutputRequestId } } }`,
    { c: textContent("mine"), t: [dynamicTool("lookup")], rf: envelope() }, owner.token);
  const result = created.data!.createChat.result;
  Object.assign(ids, { chat: result.chatId, message: result.messageId, request: result.structuredOutputRequestId });
  const queued = await t.gql<{ sendChatMessage: { result: { queuedMessageId: string } } }>(
    `mutation($id: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $id, content: $c}) { result { queuedMessageId } } }`,
    { id: ids.chat, c: textContent("queued") }, owner.token);
  ids.queued = queued.data!.sendChatMessage.result.queuedMessageId;
  const batch = await t.gql<{ createBatch: { result: { rowId: string } } }>(
    `mutation($rf: String!, $items: JSON!) { createBatch(input: {responseFormat: $rf, items: $items}) { result { rowId } } }`,
    { rf: envelope(), items: [{ line: 1, content: textContent("item") }] }, owner.token);
  ids.batch = batch.data!.createBatch.result.rowId;
  const fence = await acquire(t.db, ids.chat!);
  await enterRequiresAction(t.db, fence, [{ tool_call_id: "call_1", tool_name: "lookup" }]);
});
test.after(async () => {
  await t.close();
});

const READS: [string, string, (data: Record<string, unknown>) => unknown][] = [
  ["chatByRowId", "query($id: UUID!) { chatByRowId(rowId: $id) { rowId } }", (d) => d.chatByRowId],
  ["chatMessageByRowId", "query($id: BigInt!) { chatMessageByRowId(rowId: $id) { rowId } }", (d) => d.chatMessageByRowId],
  ["chatQueuedMessageByRowId", "query($id: BigInt!) { chatQueuedMessageByRowId(rowId: $id) { rowId } }", (d) => d.chatQueuedMessageByRowId],
  ["structuredOutputRequestByRowId", "query($id: UUID!) { structuredOutputRequestByRowId(rowId: $id) { rowId } }", (d) => d.structuredOutputRequestByRowId],
  ["batchByRowId", "query($id: UUID!) { batchByRowId(rowId: $id) { rowId } }", (d) => d.batchByRowId],
  ["batchItemByBatchIdAndLine", "query($id: UUID!) { batchItemByBatchIdAndLine(batchId: $id, line: 1) { line } }", (d) => d.batchItemByBatchIdAndLine],
  ["allBatchItems", "query { allBatchItems { nodes { line } } }", (d) => (d.allBatchItems as { nodes: unknown[] }).nodes[0]],
];

const idFor: Record<string, string> = {
  chatByRowId: "chat", chatMessageByRowId: "message", chatQueuedMessageByRowId: "queued",
  structuredOutputRequestByRowId: "request", batchByRowId: "batch", batchItemByBatchIdAndLine: "batch", allBatchItems: "batch",
};

test("reads: the owner finds each row; another user and anonymous find nothing, without an error", async () => {
  for (const [name, query, pick] of READS) {
    const variables = { id: ids[idFor[name]!] };
    const mine = await t.gql(query, variables, owner.token);
    assert.ok(!mine.errors && pick(mine.data!), `owner: ${name} ${JSON.stringify(mine)}`);
    for (const [who, token] of [["other", other.token], ["anonymous", null]] as const) {
      const response = await t.gql(query, variables, token);
      assert.ok(!response.errors, `${who}: ${name} ${JSON.stringify(response.errors)}`);
      assert.not.ok(pick(response.data!), `${who}: ${name} found a row`);
    }
  }
});

const MUTATIONS: [string, string, Record<string, unknown>][] = [
  ["sendChatMessage", "mutation($chat: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $chat, content: $c}) { clientMutationId } }", { c: textContent("x") }],
  ["editChatMessage", "mutation($message: BigInt!, $c: JSON!) { editChatMessage(input: {messageId: $message, content: $c}) { clientMutationId } }", { c: textContent("x") }],
  ["deleteQueuedMessage", "mutation($queued: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $queued}) { clientMutationId } }", {}],
  ["promoteQueuedMessage", "mutation($queued: BigInt!) { promoteQueuedMessage(input: {queuedMessageId: $queued}) { clientMutationId } }", {}],
  ["interruptChat", "mutation($chat: UUID!) { interruptChat(input: {chatId: $chat}) { clientMutationId } }", {}],
  ["archiveChat", "mutation($chat: UUID!) { archiveChat(input: {chatId: $chat}) { clientMutationId } }", {}],
  ["setChatPlanMode", "mutation($chat: UUID!) { setChatPlanMode(input: {chatId: $chat, enabled: false}) { clientMutationId } }", {}],
  ["submitToolResults", "mutation($chat: UUID!, $r: JSON!) { submitToolResults(input: {chatId: $chat, results: $r}) { clientMutationId } }",
    { r: [{ tool_call_id: "call_1", result: "x" }] }],
  ["compactChat", "mutation($chat: UUID!) { compactChat(input: {chatId: $chat}) { clientMutationId } }", {}],
  ["setChatMcpServers", "mutation($chat: UUID!) { setChatMcpServers(input: {chatId: $chat, serverIds: []}) { clientMutationId } }", {}],
  ["cancelBatch", "mutation($batch: UUID!) { cancelBatch(input: {batchId: $batch}) { clientMutationId } }", {}],
];

async function snapshot(): Promise<unknown> {
  const { rows } = await t.db.pool.query(
    `select (select snapshot_version from chat_public.chats where id = $1) as chat,
            (select status from chat_public.batches where id = $2) as batch`, [ids.chat, ids.batch]);
  return rows[0];
}

test("mutations on another user's ids: NOT_FOUND for a user, UNAUTHENTICATED anonymous; nothing changes", async () => {
  const before = await snapshot();
  for (const [name, mutation, extra] of MUTATIONS) {
    const variables = { chat: ids.chat, message: ids.message, queued: ids.queued, batch: ids.batch, ...extra };
    const asOther: GraphQLResponse = await t.gql(mutation, variables, other.token);
    assert.is(asOther.errors?.[0]?.extensions?.code, "NOT_FOUND", `other: ${name} ${JSON.stringify(asOther.errors)}`);
    const anonymous: GraphQLResponse = await t.gql(mutation, variables, null);
    assert.is(anonymous.errors?.[0]?.extensions?.code, "UNAUTHENTICATED", `anonymous: ${name} ${JSON.stringify(anonymous.errors)}`);
  }
  assert.equal(await snapshot(), before);
});

test("subscriptions to another user's chat end with NOT_FOUND", async () => {
  const client = t.ws(other.token);
  const error = await new Promise<unknown>((resolve) => {
    client.subscribe({ query: "subscription($id: UUID!) { chatEvents(chatId: $id) { __typename } }", variables: { id: ids.chat } }, {
      next: (value) => resolve(value.errors),
      error: (reason) => resolve(reason),
      complete: () => resolve("completed without an error"),
    });
  });
  assert.match(JSON.stringify(error), /NOT_FOUND/);
});

test("idempotency keys are per user: the same key in two users' hands are two chats", async () => {
  const create = (token: string) => t.gql<{ createChat: { result: { chatId: string } } }>(
    `mutation($c: JSON!) { createChat(input: {content: $c, idempotencyKey: "shared-key"}) { result { chatId } } }`,
    { c: textContent("same") }, token);
  const a = await create(owner.token);
  const b = await create(other.token);
  assert.ok(a.data && b.data, JSON.stringify([a.errors, b.errors]));
  assert.is.not(a.data!.createChat.result.chatId, b.data!.createChat.result.chatId);
  const reserved = await t.gql(`mutation($c: JSON!) { createChat(input: {content: $c, idempotencyKey: "batch:${ids.batch}:1"}) { result { chatId } } }`,
    { c: textContent("plant") }, owner.token);
  assert.is(reserved.errors?.[0]?.extensions?.code, "INVALID_INPUT");
  assert.equal(reserved.errors?.[0]?.extensions?.validations?.[0]?.field, "idempotency_key");
});

test.run();
