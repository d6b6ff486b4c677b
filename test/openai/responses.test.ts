// /v1/responses through the official `openai` npm SDK against a real chatd (API server, worker, scripted model):
// background create → retrieve, the exact valueJson as output_text, each receipt status mapped, cancel in every
// state and twice, Idempotency-Key, OpenAI error bodies with `param` in the request's terms, and isolation
// between users (row-level security through chatd's own functions).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type OpenAI from "openai";
import { APIError } from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { waitFor } from "../support/worker.ts";
import { client, finalize, slowFinalize, startLiveStack, type LiveStack } from "./sdk.ts";

const SCHEMA = { type: "object", properties: { n: { type: "integer" }, label: { type: "string" } }, required: ["n", "label"],
  additionalProperties: false };
const FORMAT = { type: "json_schema" as const, name: "count", schema: SCHEMA, strict: true };

let stack: LiveStack;
let alice: OpenAI;
let bob: OpenAI;

test.before(async () => {
  stack = await startLiveStack(["alice", "bob"]);
  alice = client(stack, stack.users.alice!.token);
  bob = client(stack, stack.users.bob!.token);
});
test.after(() => stack.close());

async function settled(id: string): Promise<OpenAI.Responses.Response> {
  return waitFor(`response ${id} to finish`, async () => {
    const response = await alice.responses.retrieve(id);
    return response.status === "queued" || response.status === "in_progress" ? undefined : response;
  });
}

async function refusal(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error("expected an API error");
}

test("background create returns queued or in_progress, retrieve reaches completed with the exact valueJson", async () => {
  const created = await alice.responses.create({ model: "scripted", background: true, metadata: { run: "1" },
    input: finalize(`{"n": 123456789012345678901234567890, "label": "big"}`), text: { format: FORMAT } });
  assert.match(created.id, /^resp_[0-9a-f]{32}$/);
  assert.ok(created.status === "queued" || created.status === "in_progress", created.status);
  assert.is(created.background, true);
  const done = await settled(created.id);
  assert.is(done.status, "completed");
  assert.is(done.output_text, `{"n": 123456789012345678901234567890, "label": "big"}`);
  assert.equal(done.metadata, { run: "1" });
  assert.is(done.error, null);
  assert.is(done.model, "scripted");
});

test("without background the call returns at the receipt; a plain-text Response's output_text is the text", async () => {
  const done = await alice.responses.create({ model: "scripted", input: finalize(`"hello there"`) });
  assert.is(done.status, "completed");
  assert.is(done.output_text, "hello there");
  assert.equal(done.text?.format, { type: "text" });
  const usage = done.usage!;
  assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0, JSON.stringify(usage));
  assert.is(usage.total_tokens, usage.input_tokens + usage.output_tokens);
});

test("responses.parse with zodTextFormat fills output_parsed", async () => {
  const Count = z.object({ n: z.number().int(), label: z.string() });
  const parsed = await alice.responses.parse({ model: "scripted", input: finalize(`{"n": 7, "label": "seven"}`),
    text: { format: zodTextFormat(Count, "count") } });
  assert.equal(parsed.output_parsed, { n: 7, label: "seven" });
});

test("a refusal is completed with a refusal part; a failure is failed with chatd's code", async () => {
  const refused = await alice.responses.create({ model: "scripted", text: { format: FORMAT },
    input: JSON.stringify({ script: [{ text: "no", finish: "content-filter" }] }) });
  assert.is(refused.status, "completed");
  const content = (refused.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0]!;
  assert.is(content.type, "refusal");
  assert.is(refused.output_text, "");
  const failed = await alice.responses.create({ model: "scripted", text: { format: FORMAT },
    input: JSON.stringify({ script: [{ text: "just words" }, { text: "more words" }, { text: "still words" }, { text: "words" }] }) });
  assert.is(failed.status, "failed");
  assert.is(failed.error?.code as string, "not_produced");
  assert.equal(failed.output, []);
});

test("cancel: a running Response becomes cancelled, a second cancel answers the same, a finished one is unchanged", async () => {
  const created = await alice.responses.create({ model: "scripted", background: true, text: { format: FORMAT },
    input: slowFinalize(`{"n": 1, "label": "x"}`, 60_000) });
  await waitFor("the turn to run", async () => (await alice.responses.retrieve(created.id)).status === "in_progress");
  const cancelled = await alice.responses.cancel(created.id);
  assert.is(cancelled.status, "cancelled");
  const again = await alice.responses.cancel(created.id);
  assert.is(again.status, "cancelled");
  assert.is((await alice.responses.retrieve(created.id)).status, "cancelled");
  const done = await alice.responses.create({ model: "scripted", input: finalize(`"ok"`) });
  assert.is((await alice.responses.cancel(done.id)).status, "completed");
});

test("cancel: a queued Response (another Response's turn runs first in its chat) is deleted from the queue", async () => {
  // A queued request: the same chat gets a second message while the first runs; /v1 reads both.
  const first = await alice.responses.create({ model: "scripted", background: true, text: { format: FORMAT },
    input: slowFinalize(`{"n": 1, "label": "x"}`, 60_000) });
  const { rows } = await stack.t.db.pool.query<{ chat_id: string }>(
    "select chat_id from chat_public.structured_output_requests where id = $1", [first.id.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-")]);
  const send = await stack.t.gql<{ sendChatMessage: { result: { structuredOutputRequestId: string; queuedMessageId: string } } }>(
    `mutation($id: UUID!, $rf: String) { sendChatMessage(input: {chatId: $id, content: [{type: "text", text: "next"}], responseFormat: $rf}) {
      result { structuredOutputRequestId queuedMessageId } } }`,
    { id: rows[0]!.chat_id, rf: JSON.stringify({ type: "json_schema", json_schema: { name: "count", schema: SCHEMA } }) },
    stack.users.alice!.token);
  const queuedId = `resp_${send.data!.sendChatMessage.result.structuredOutputRequestId.replaceAll("-", "")}`;
  assert.ok(send.data!.sendChatMessage.result.queuedMessageId);
  assert.is((await alice.responses.retrieve(queuedId)).status, "queued");
  assert.is((await alice.responses.cancel(queuedId)).status, "cancelled");
  assert.is((await alice.responses.cancel(first.id)).status, "cancelled");
});

test("stream: created first, the exact text, completed last; a replay after N repeats the same events", async () => {
  const stream = await alice.responses.create({ model: "scripted", stream: true, text: { format: FORMAT },
    input: slowFinalize(`{"n": 98765432109876543210, "label": "s"}`, 300) });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  assert.equal(events.map((e) => e.type), ["response.created", "response.in_progress", "response.output_item.added",
    "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
    "response.output_item.done", "response.completed"]);
  assert.equal(events.map((e) => e.sequence_number), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
  assert.is(completed.response.output_text ?? (completed.response.output[0] as OpenAI.Responses.ResponseOutputMessage)
    .content.map((c) => (c.type === "output_text" ? c.text : "")).join(""), `{"n": 98765432109876543210, "label": "s"}`);
  const id = completed.response.id;
  const replay: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await alice.responses.retrieve(id, { stream: true, starting_after: 3 })) replay.push(event);
  assert.equal(replay, events.slice(4));
  const all: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await alice.responses.retrieve(id, { stream: true })) all.push(event);
  assert.equal(all, events);
  // The SDK's helper rebuilds the final Response from the replay.
  const final = await alice.responses.stream({ response_id: id }).finalResponse();
  assert.is(final.output_text, `{"n": 98765432109876543210, "label": "s"}`);
  const bad = await fetch(`${stack.t.api.url}/v1/responses/${id}?stream=true&starting_after=-1`, {
    headers: { authorization: `Bearer ${stack.users.alice!.token}` } });
  assert.is(bad.status, 400);
  assert.equal(await bad.json(), { error: { message: "starting_after must be a non-negative integer", type: "invalid_request_error",
    param: "starting_after", code: "invalid_value" } });
});

test("Idempotency-Key: the same key and body give the same Response; another body is a 400, not retried", async () => {
  const body = { model: "scripted", background: true, input: finalize(`"once"`) };
  const headers = { "Idempotency-Key": "key-1" };
  const a = await alice.responses.create(body, { headers });
  const b = await alice.responses.create(body, { headers });
  assert.is(b.id, a.id);
  const error = await refusal(alice.responses.create({ ...body, input: finalize(`"twice"`) }, { headers }));
  assert.is(error.status, 400);
  assert.is(error.code, "idempotency_key_reused");
  // Another user's same key is another Response.
  const other = await bob.responses.create(body, { headers });
  assert.is.not(other.id, a.id);
});

test("errors: 404 for an unknown or another user's id, 401 for a bad token, param in the request's terms", async () => {
  const mine = await alice.responses.create({ model: "scripted", background: true, input: finalize(`"mine"`) });
  const hidden = await refusal(bob.responses.retrieve(mine.id));
  assert.is(hidden.status, 404);
  assert.is(hidden.message.includes(`Response with id '${mine.id}' not found.`), true, hidden.message);
  assert.is((await refusal(bob.responses.cancel(mine.id))).status, 404);
  assert.is((await refusal(alice.responses.retrieve("resp_nope"))).status, 404);
  const unauthorized = await refusal(client(stack, "not-a-token").responses.retrieve(mine.id));
  assert.is(unauthorized.status, 401);
  assert.is(unauthorized.code, "invalid_api_key");
  const badSchema = await refusal(alice.responses.create({ model: "scripted", input: "x",
    text: { format: { type: "json_schema", name: "bad", schema: { type: "object", properties: { a: { type: "nope" } } } } } }));
  assert.is(badSchema.status, 400);
  assert.is(badSchema.param, "text.format.schema");
  assert.is(badSchema.code, "invalid_response_format");
  const badName = await refusal(alice.responses.create({ model: "scripted", input: "x",
    text: { format: { type: "json_schema", name: "bad name", schema: SCHEMA } } }));
  assert.is(badName.param, "text.format.name");
  const model = await refusal(alice.responses.create({ model: "no-such-model", input: "x" }));
  assert.is(model.status, 400);
  assert.is(model.param, "model");
  assert.is(model.code, "model_not_found");
  const unknown = await refusal(alice.responses.create({ model: "scripted", input: "x", frobnicate: 1 } as never));
  assert.is(unknown.status, 400);
  assert.is(unknown.param, "frobnicate");
  const assistant = await refusal(alice.responses.create({ model: "scripted", input: [{ role: "assistant", content: "x" }] }));
  assert.is(assistant.param, "input[0].role");
});

test("previous_response_id with new input follows a finished Response up in its chat; only the newest one", async () => {
  const first = await alice.responses.create({ model: "scripted", input: finalize(`{"n": 1, "label": "first"}`), text: { format: FORMAT } });
  const next = await alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: finalize(`{"n": 2, "label": "second"}`), text: { format: FORMAT } });
  assert.is(next.status, "completed");
  assert.is(next.output_text, `{"n": 2, "label": "second"}`);
  assert.is(next.previous_response_id, first.id);
  const chatOf = (r: OpenAI.Responses.Response) => (r as unknown as { chat_id: string }).chat_id;
  assert.is(chatOf(next), chatOf(first));
  // Each follow-up may choose its own format: here a plain-text answer.
  const plain = await alice.responses.create({ model: "scripted", previous_response_id: next.id, input: finalize(`"third"`) });
  assert.equal([plain.output_text, chatOf(plain)], ["third", chatOf(first)]);
  assert.is((await alice.responses.retrieve(next.id)).output_text, `{"n": 2, "label": "second"}`);
  for (const body of [{ previous_response_id: first.id }, { previous_response_id: plain.id, model: "mock" },
    { previous_response_id: plain.id, workspace: "elsewhere" }]) {
    const error = await refusal(alice.responses.create({ model: "scripted", input: finalize(`"x"`), ...body }));
    assert.is(error.status, 400);
    assert.is(error.param, Object.keys(body).at(-1) === "previous_response_id" ? "previous_response_id" : Object.keys(body).at(-1)!);
  }
  const running = await alice.responses.create({ model: "scripted", background: true, input: slowFinalize(`"slow"`, 60_000) });
  const busy = await refusal(alice.responses.create({ model: "scripted", previous_response_id: running.id, input: finalize(`"x"`) }));
  assert.is(busy.param, "previous_response_id");
  await alice.responses.cancel(running.id);
  assert.is((await refusal(bob.responses.create({ model: "scripted", previous_response_id: plain.id, input: "x" }))).param,
    "previous_response_id");
});

test("a Response whose chat was deleted reads as deleted: 404 response_deleted on retrieve and cancel", async () => {
  const done = await alice.responses.create({ model: "scripted", input: finalize(`"gone soon"`) });
  const chatId = (done as unknown as { chat_id: string }).chat_id;
  const deleted = await stack.t.gql<{ deleteChat: { result: string } }>(
    `mutation($id: UUID!) { deleteChat(input: {chatId: $id}) { result } }`, { id: chatId }, stack.users.alice!.token);
  assert.is(deleted.data?.deleteChat.result, chatId);
  for (const call of [alice.responses.retrieve(done.id), alice.responses.cancel(done.id)]) {
    const error = await refusal(call);
    assert.is(error.status, 404);
    assert.is(error.code, "response_deleted");
  }
  // Another user asking for it, and an id that never was, are plain not-found.
  assert.is((await refusal(bob.responses.retrieve(done.id))).code, null);
  assert.is((await refusal(alice.responses.retrieve(`resp_${"0".repeat(32)}`))).code, null);
});

test("with structured output off, a create is a 400 on text.format (never retried), and nothing is stored", async () => {
  await stack.t.db.pool.query("update chat_private.experiments set enabled = false where name = 'chat-structured-output'");
  try {
    const before = await stack.t.db.pool.query("select count(*)::int as n from chat_public.chats");
    const error = await refusal(alice.responses.create({ model: "scripted", input: "x" }));
    assert.is(error.status, 400);
    assert.is(error.param, "text.format");
    assert.is(error.code, "structured_output_disabled");
    const after = await stack.t.db.pool.query("select count(*)::int as n from chat_public.chats");
    assert.is(after.rows[0].n, before.rows[0].n);
  } finally {
    await stack.t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  }
});

test.run();
