// Mutations through the real server: the request contract (every envelope rule with its exact field, via
// the shared fixture), refusals that change nothing, plan mode / child chat / reserved tool admission, payloads.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { acquire } from "../support/chats.ts";
import { envelope, startTestApi, textContent, type GraphQLResponse, type TestApi } from "./harness.ts";

interface FixtureCase { name: string; text: string; valid: boolean; field?: string }
const cases = JSON.parse(readFileSync(join(projectRoot, "test", "fixtures", "response-format-envelope.json"), "utf8")) as FixtureCase[];

const CREATE = `mutation($content: JSON!, $rf: String, $tools: JSON, $plan: Boolean) {
  createChat(input: {content: $content, responseFormat: $rf, dynamicTools: $tools, planMode: $plan}) {
    result { chatId messageId structuredOutputRequestId message { rowId structuredOutputRequestId } } } }`;
const SEND = `mutation($chatId: UUID!, $content: JSON!, $rf: String, $busy: BusyBehavior, $key: String) {
  sendChatMessage(input: {chatId: $chatId, content: $content, responseFormat: $rf, busyBehavior: $busy, idempotencyKey: $key}) {
    result { messageId queuedMessageId structuredOutputRequestId
      message { rowId structuredOutputRequestId } queuedMessage { rowId structuredOutputRequestId } chat { status } } } }`;

let t: TestApi;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
});
test.after(async () => { await t.close(); });

function refusal(response: GraphQLResponse) {
  const error = response.errors?.[0];
  assert.ok(error, `expected an error, got ${JSON.stringify(response)}`);
  return { code: error.extensions?.code, fields: (error.extensions?.validations ?? []).map((v) => v.field), message: error.message };
}

async function state(chatId: string | null) {
  const { rows } = await t.db.pool.query<Record<string, string>>(
    `select (select row(c.status, c.archived, c.snapshot_version, c.history_version, c.generation_attempt, c.queue_version)::text
             from chat_public.chats c where c.id = $1) as chat,
            (select count(*) from chat_public.chats)::text as chats,
            (select count(*) from chat_public.chat_messages)::text as messages,
            (select count(*) from chat_public.chat_queued_messages)::text as queued,
            (select count(*) from chat_public.structured_output_requests)::text as requests,
            (select count(*) from graphile_worker.jobs)::text as jobs`, [chatId]);
  return rows[0];
}

test("every envelope rule of the shared fixture returns its exact field; a refusal creates nothing", async () => {
  for (const c of cases) {
    const before = await state(null);
    const response = await t.gql(CREATE, { content: textContent(c.name), rf: c.text }, alice.token);
    if (c.valid) {
      assert.not.ok(response.errors, `${c.name}: ${JSON.stringify(response.errors)}`);
      continue;
    }
    const { code, fields } = refusal(response);
    assert.is(code, "INVALID_RESPONSE_FORMAT", c.name);
    assert.equal(fields, [c.field], c.name);
    assert.equal(await state(null), before, `${c.name}: nothing persisted`);
  }
});

test("payloads carry the message or the queued message with its structuredOutputRequestId", async () => {
  const created = await t.gql<{ createChat: { result: { chatId: string; structuredOutputRequestId: string; message: { structuredOutputRequestId: string } } } }>(
    CREATE, { content: textContent("start"), rf: envelope() }, alice.token);
  const result = created.data!.createChat.result;
  assert.match(result.structuredOutputRequestId, /^[0-9a-f-]{36}$/);
  assert.is(result.message.structuredOutputRequestId, result.structuredOutputRequestId);
  const sent = await t.gql<{ sendChatMessage: { result: { messageId: string | null; queuedMessage: { rowId: string; structuredOutputRequestId: string }; structuredOutputRequestId: string } } }>(
    SEND, { chatId: result.chatId, content: textContent("next"), rf: envelope("second") }, alice.token);
  const queued = sent.data!.sendChatMessage.result;
  assert.is(queued.messageId, null);
  assert.is(queued.queuedMessage.structuredOutputRequestId, queued.structuredOutputRequestId);
  assert.ok(queued.structuredOutputRequestId !== result.structuredOutputRequestId);
});

test("a refused send does not queue, persist or interrupt a running turn", async () => {
  const created = await t.gql<{ createChat: { result: { chatId: string } } }>(CREATE, { content: textContent("run") }, alice.token);
  const chatId = created.data!.createChat.result.chatId;
  await acquire(t.db, chatId);
  const before = await state(chatId);
  const invalid = await t.gql(SEND, { chatId, content: textContent("x"), busy: "INTERRUPT",
    rf: '{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","type":"string"}}}' }, alice.token);
  assert.equal(refusal(invalid).fields, ["response_format.json_schema.schema"], JSON.stringify(invalid));
  const badContent = await t.gql(SEND, { chatId, content: [{ type: "image" }], busy: "INTERRUPT" }, alice.token);
  assert.equal(refusal(badContent), { code: "INVALID_INPUT", fields: ["content[0].type"], message: 'content[0].type must be "text"' });
  assert.equal(await state(chatId), before);
  const interrupting = await t.gql<{ sendChatMessage: { result: { chat: { status: string } } } }>(
    SEND, { chatId, content: textContent("stop"), busy: "INTERRUPT" }, alice.token);
  assert.is(interrupting.data!.sendChatMessage.result.chat.status, "INTERRUPTING");
});

test("busyBehavior is an enum; idempotency keys return the first result", async () => {
  const created = await t.gql<{ createChat: { result: { chatId: string } } }>(CREATE, { content: textContent("idem") }, alice.token);
  const chatId = created.data!.createChat.result.chatId;
  const wrong = await t.gql(SEND, { chatId, content: textContent("x"), busy: "LATER" }, alice.token);
  assert.ok(wrong.errors?.[0]?.message.includes("BusyBehavior"));
  const first = await t.gql<{ sendChatMessage: { result: { queuedMessageId: string } } }>(SEND, { chatId, content: textContent("k"), key: "k-1" }, alice.token);
  const again = await t.gql<{ sendChatMessage: { result: { queuedMessageId: string } } }>(SEND, { chatId, content: textContent("k"), key: "k-1" }, alice.token);
  assert.is(again.data!.sendChatMessage.result.queuedMessageId, first.data!.sendChatMessage.result.queuedMessageId);
});

test("plan mode, child chats and a reserved dynamic tool name refuse structured requests with their field", async () => {
  const plan = await t.gql(CREATE, { content: textContent("p"), rf: envelope(), plan: true }, alice.token);
  assert.equal(refusal(plan), { code: "STRUCTURED_OUTPUT_IN_PLAN_MODE", fields: ["response_format"], message: "structured output is not available in plan mode" });
  const tool = { name: "coder_structured_output", input_schema: { type: "object" } };
  const reserved = await t.gql(CREATE, { content: textContent("r"), rf: envelope(), tools: [tool] }, alice.token);
  assert.is(refusal(reserved).code, "RESERVED_TOOL_NAME");
  assert.equal(refusal(reserved).fields, ["dynamic_tools"]);
  // A plain chat refuses the name too, with the same field.
  const plainReserved = await t.gql(CREATE, { content: textContent("r"), tools: [tool] }, alice.token);
  assert.is(refusal(plainReserved).code, "RESERVED_TOOL_NAME");
  assert.equal(refusal(plainReserved).fields, ["dynamic_tools"]);
  const parent = await t.gql<{ createChat: { result: { chatId: string } } }>(CREATE, { content: textContent("parent") }, alice.token);
  const { rows } = await t.db.pool.query<{ id: string }>(
    `insert into chat_public.chats (owner_id, model_config_id, parent_chat_id) values ($1, 'scripted', $2) returning id`,
    [alice.id, parent.data!.createChat.result.chatId]);
  const child = await t.gql(SEND, { chatId: rows[0]!.id, content: textContent("c"), rf: envelope() }, alice.token);
  assert.equal(refusal(child).code, "STRUCTURED_OUTPUT_ON_CHILD_CHAT");
  assert.equal(refusal(child).fields, ["response_format"]);
  const plain = await t.gql(SEND, { chatId: rows[0]!.id, content: textContent("c") }, alice.token);
  assert.not.ok(plain.errors);
});

test("SQL refusals map through the registry: not found, transition not allowed, plan mode while active", async () => {
  const missing = await t.gql(SEND, { chatId: "00000000-0000-4000-8000-000000000000", content: textContent("x") }, alice.token);
  assert.equal(refusal(missing), { code: "NOT_FOUND", fields: ["chat_id"], message: "chat not found" });
  const created = await t.gql<{ createChat: { result: { chatId: string } } }>(CREATE, { content: textContent("s"), rf: envelope() }, alice.token);
  const chatId = created.data!.createChat.result.chatId;
  const planMode = await t.gql(`mutation($id: UUID!) { setChatPlanMode(input: {chatId: $id, enabled: true}) { result { planMode } } }`,
    { id: chatId }, alice.token);
  assert.equal(refusal(planMode).code, "STRUCTURED_OUTPUT_ACTIVE");
  assert.equal(refusal(planMode).fields, ["enabled"]);
  const archive = await t.gql(`mutation($id: UUID!) { archiveChat(input: {chatId: $id}) { result { archived } } }`, { id: chatId }, alice.token);
  assert.is(refusal(archive).code, "TRANSITION_NOT_ALLOWED");
});

test("the request body limit admits a 64 KiB schema escaped inside a JSON string", async () => {
  const properties: Record<string, object> = {};
  for (let i = 0; properties && JSON.stringify(properties).length < 60_000; i++) properties[`p${i}`] = { type: "string", description: "\"quoted\" \\ text" };
  const rf = envelope("big", { type: "object", properties });
  const response = await t.gql(CREATE, { content: textContent("big"), rf }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors?.[0]));
});

test.run();
