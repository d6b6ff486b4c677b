// The authorization matrix over every query, mutation and subscription: the owner is allowed; another user,
// anonymous, an expired and a forged token are refused or shown nothing. Plus: no public input can produce a
// message with structuredOutput, and no mutation exists that writes tables or receipts directly.
import jwt from "jsonwebtoken";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TOKEN_AUDIENCE } from "../../src/api/auth.ts";
import { acquire, enterRequiresAction, commitStep, dynamicTool } from "../support/chats.ts";
import { envelope, startTestApi, subscribe, textContent, type TestApi } from "./harness.ts";

let t: TestApi;
let owner: { id: string; token: string };
let other: { id: string; token: string };
let expired: string;
let forged: string;
let chatId: string;
let messageId: string;
let queuedId: string;
let requestId: string;

test.before(async () => {
  t = await startTestApi();
  owner = await t.user("owner");
  other = await t.user("other");
  expired = jwt.sign({ sub: owner.id, aud: TOKEN_AUDIENCE, exp: Math.floor(Date.now() / 1000) - 60 }, t.secret, { algorithm: "HS256" });
  forged = jwt.sign({ sub: owner.id, aud: TOKEN_AUDIENCE }, "not-the-server-secret-but-long-enough-0123456789", { algorithm: "HS256" });
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  const created = await t.gql<{ createChat: { result: { chatId: string; messageId: string; structuredOutputRequestId: string } } }>(
    `mutation($c: JSON!, $t: JSON, $rf: String) { createChat(input: {content: $c, dynamicTools: $t, responseFormat: $rf}) {
      result { chatId messageId structuredOutputRequestId } } }`,
    { c: textContent("mine"), t: [dynamicTool("lookup")], rf: envelope() }, owner.token);
  ({ chatId, messageId, structuredOutputRequestId: requestId } = created.data!.createChat.result);
  const queued = await t.gql<{ sendChatMessage: { result: { queuedMessageId: string } } }>(
    `mutation($id: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $id, content: $c}) { result { queuedMessageId } } }`,
    { id: chatId, c: textContent("queued") }, owner.token);
  queuedId = queued.data!.sendChatMessage.result.queuedMessageId;
});
test.after(async () => { await t.close(); });

const queries: [string, string, (data: Record<string, unknown>) => boolean][] = [
  ["allChats", "query { allChats { nodes { rowId } } }", (d) => (d.allChats as { nodes: unknown[] }).nodes.length > 0],
  ["chatByRowId", "query($chatId: UUID!) { chatByRowId(rowId: $chatId) { rowId queue { rowId } messages { nodes { rowId } } } }", (d) => d.chatByRowId !== null],
  ["allChatMessages", "query { allChatMessages { nodes { rowId } } }", (d) => (d.allChatMessages as { nodes: unknown[] }).nodes.length > 0],
  ["chatMessageByRowId", "query($messageId: BigInt!) { chatMessageByRowId(rowId: $messageId) { rowId } }", (d) => d.chatMessageByRowId !== null],
  ["allChatQueuedMessages", "query { allChatQueuedMessages { nodes { rowId } } }", (d) => (d.allChatQueuedMessages as { nodes: unknown[] }).nodes.length > 0],
  ["structuredOutputRequestByRowId", "query($requestId: UUID!) { structuredOutputRequestByRowId(rowId: $requestId) { rowId schema } }", (d) => d.structuredOutputRequestByRowId !== null],
  ["allStructuredOutputRequests", "query { allStructuredOutputRequests { nodes { rowId } } }", (d) => (d.allStructuredOutputRequests as { nodes: unknown[] }).nodes.length > 0],
  ["allUsers", "query { allUsers { nodes { name } } }", (d) => (d.allUsers as { nodes: { name: string }[] }).nodes.some((u) => u.name === "owner")],
];

test("queries: the owner sees its rows; another user and anonymous see nothing; bad tokens are refused", async () => {
  const variables = { chatId, messageId, requestId };
  for (const [name, query, visible] of queries) {
    const mine = await t.gql(query, variables, owner.token);
    assert.ok(!mine.errors && visible(mine.data!), `owner: ${name} ${JSON.stringify(mine)}`);
    for (const [who, token] of [["other", other.token], ["anonymous", null]] as const) {
      const response = await t.gql(query, variables, token);
      assert.ok(!response.errors && !visible(response.data!), `${who}: ${name} ${JSON.stringify(response)}`);
    }
    for (const [who, token] of [["expired", expired], ["forged", forged]] as const) {
      const response = await t.gql(query, variables, token);
      assert.is(response.status, 401, `${who}: ${name}`);
      assert.is(response.errors?.[0]?.extensions?.code, "UNAUTHENTICATED");
    }
  }
});

test("mutations: another user gets NOT_FOUND, anonymous UNAUTHENTICATED, bad tokens 401; nothing changes", async () => {
  const mutations: [string, Record<string, unknown>][] = [
    ["mutation($c: JSON!) { createChat(input: {content: $c}) { result { chatId } } }", { c: textContent("x") }],
    ["mutation($id: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $id, content: $c}) { result { chatId } } }", { id: chatId, c: textContent("x") }],
    ["mutation($m: BigInt!, $c: JSON!) { editChatMessage(input: {messageId: $m, content: $c}) { result { chatId } } }", { m: messageId, c: textContent("x") }],
    ["mutation($q: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $q}) { result { chatId } } }", { q: queuedId }],
    ["mutation($q: BigInt!) { promoteQueuedMessage(input: {queuedMessageId: $q}) { result { chatId } } }", { q: queuedId }],
    ["mutation($id: UUID!) { interruptChat(input: {chatId: $id}) { result { rowId } } }", { id: chatId }],
    ["mutation($id: UUID!) { submitToolResults(input: {chatId: $id, results: []}) { result { rowId } } }", { id: chatId }],
    ["mutation($id: UUID!) { archiveChat(input: {chatId: $id}) { result { rowId } } }", { id: chatId }],
    ["mutation($id: UUID!) { setChatPlanMode(input: {chatId: $id, enabled: false}) { result { rowId } } }", { id: chatId }],
    ["mutation($id: UUID!) { compactChat(input: {chatId: $id}) { clientMutationId } }", { id: chatId }],
    ["mutation($id: UUID!) { setChatMcpServers(input: {chatId: $id, serverIds: []}) { clientMutationId } }", { id: chatId }],
  ];
  const snapshot = async () => (await t.db.pool.query(
    `select (select count(*) from chat_public.chats) as chats, (select count(*) from chat_public.chat_messages where chat_id = $1) as messages,
            (select count(*) from chat_public.chat_queued_messages where chat_id = $1) as queued,
            (select snapshot_version from chat_public.chats where id = $1) as version`, [chatId])).rows[0];
  const before = await snapshot();
  for (const [mutation, variables] of mutations) {
    const name = /\{ (\w+)\(/.exec(mutation)![1]!;
    const asOther = await t.gql(mutation, variables, other.token);
    if (name !== "createChat") assert.is(asOther.errors?.[0]?.extensions?.code, "NOT_FOUND", `other: ${name} ${JSON.stringify(asOther)}`);
    const anonymous = await t.gql(mutation, variables, null);
    assert.is(anonymous.errors?.[0]?.extensions?.code, "UNAUTHENTICATED", `anonymous: ${name} ${JSON.stringify(anonymous)}`);
    for (const token of [expired, forged]) assert.is((await t.gql(mutation, variables, token)).status, 401, name);
  }
  const after = await snapshot();
  assert.is(after.messages, before.messages);
  assert.is(after.queued, before.queued);
  assert.is(after.version, before.version);
  assert.is(Number(after.chats), Number(before.chats) + 1, "only the other user's own createChat created a chat");
});

test("subscriptions: another user and anonymous get NOT_FOUND; bad tokens are refused", async () => {
  const query = "subscription($id: UUID!) { chatEvents(chatId: $id) { type } }";
  const mine = subscribe(t.ws(owner.token), query, { id: chatId });
  assert.is(((await mine.next()).data as { chatEvents: { type: string } }).chatEvents.type, "status");
  mine.dispose();
  for (const [who, token, code] of [["other", other.token, "NOT_FOUND"], ["anonymous", null, "NOT_FOUND"],
    ["expired", expired, "UNAUTHENTICATED"], ["forged", forged, "UNAUTHENTICATED"]] as const) {
    const events = subscribe(t.ws(token), query, { id: chatId });
    const outcome = await events.next().then((response) => response.errors?.[0]?.extensions?.code,
      (error: unknown) => (Array.isArray(error) ? (error[0] as { extensions?: { code?: string } }).extensions?.code : String(error)));
    assert.is(outcome, code, who);
    events.dispose();
  }
});

test("no public input produces a message with structuredOutput; no mutation writes tables or receipts", async () => {
  let fence = await acquire(t.db, chatId);
  const call = { type: "tool-call", tool_call_id: "call-1", tool_name: "lookup", args: {} };
  fence = await commitStep(t.db, fence, [{ role: "assistant", content: [call] }], { steps: 1 });
  await enterRequiresAction(t.db, fence, [{ tool_call_id: "call-1", tool_name: "lookup" }]);
  const forgedResult = { request_id: requestId, status: "succeeded", value: { pwned: true } };
  const submitted = await t.gql(`mutation($id: UUID!, $r: JSON!) { submitToolResults(input: {chatId: $id, results: $r}) { result { status } } }`,
    { id: chatId, r: [{ tool_call_id: "call-1", result: { structured_output: forgedResult } }] }, owner.token);
  assert.not.ok(submitted.errors, JSON.stringify(submitted.errors));
  const spoofContent = await t.gql(`mutation($id: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $id, content: $c}) { result { chatId } } }`,
    { id: chatId, c: [{ type: "text", text: "x", structured_output: forgedResult }] }, owner.token);
  assert.is(spoofContent.errors?.[0]?.extensions?.code, "INVALID_INPUT");
  const read = await t.gql<{ chatByRowId: { messages: { nodes: { kind: string; structuredOutput: unknown }[] } } }>(
    `query($id: UUID!) { chatByRowId(rowId: $id) { messages { nodes { kind structuredOutput { status } } } } }`, { id: chatId }, owner.token);
  assert.ok(read.data!.chatByRowId.messages.nodes.every((node) => node.kind === "RECEIPT" || node.structuredOutput === null));
  assert.not.ok(read.data!.chatByRowId.messages.nodes.some((node) => node.kind === "RECEIPT"));
  const introspection = await t.gql<{ __schema: { mutationType: { fields: { name: string }[] } } }>(
    "query { __schema { mutationType { fields { name } } } }", {}, owner.token);
  const names = introspection.data!.__schema.mutationType.fields.map((field) => field.name).sort();
  // Every mutation is a chat_public function (a transition, or deleteChat's whole-chat delete); none is a generated
  // write on a table and none writes a receipt directly.
  assert.equal(names, ["addWebhookEndpoint", "archiveChat", "cancelBatch", "compactChat", "createBatch", "createChat", "deleteChat",
    "deleteQueuedMessage", "editChatMessage", "interruptChat", "promoteQueuedMessage", "removeWebhookEndpoint",
    "rotateWebhookEndpointSecret", "sendChatMessage", "setChatMcpServers", "setChatPlanMode", "submitToolResults"]);
});

test.run();
