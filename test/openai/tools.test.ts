// Function tools through the official `openai` npm SDK: the agent's call of a client tool makes the Response
// `completed` with `function_call` items; a Response with `previous_response_id` and `function_call_output` items
// continues the same turn (one chat, one request, one receipt) and carries the receipt; the first Response keeps its
// calls ever after. Each refusal of a continuation names its field; cancel ends a turn that waits for client tools.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type OpenAI from "openai";
import { APIError } from "openai";
import { client, FINALIZER, startLiveStack, type LiveStack } from "./sdk.ts";

const WEATHER = { type: "function" as const, name: "get_weather", description: "The weather in a city", strict: true,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } };
const SCHEMA = { type: "object", properties: { celsius: { type: "integer" } }, required: ["celsius"], additionalProperties: false };
const FORMAT = { type: "json_schema" as const, name: "weather", schema: SCHEMA, strict: true };

/** The agent calls get_weather, then (after the client's result) finalizes with `outputJson`. */
function weatherScript(outputJson: string): string {
  return JSON.stringify({ script: [
    { tool_calls: [{ name: "get_weather", args_raw: `{"city":"Paris"}` }] },
    { tool_calls: [{ name: FINALIZER, args_raw: `{"output":${outputJson}}` }] },
  ] });
}

let stack: LiveStack;
let alice: OpenAI;
let bob: OpenAI;

test.before(async () => {
  stack = await startLiveStack(["alice", "bob"]);
  alice = client(stack, stack.users.alice!.token);
  bob = client(stack, stack.users.bob!.token);
});
test.after(() => stack.close());

async function refusal(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error("expected an API error");
}

const calls = (response: OpenAI.Responses.Response) =>
  response.output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call");

test("a client tool call completes the Response with function_call items; the output continues the same turn", async () => {
  // An endpoint nobody listens on: the delivery row is what this test reads.
  await stack.t.db.pool.query("select chat_private.webhook_add($1, 'http://127.0.0.1:9/', null, $2)",
    [stack.users.alice!.id, `whsec_${Buffer.alloc(32, 7).toString("base64")}`]);
  const first = await alice.responses.parse({ model: "scripted", input: weatherScript(`{"celsius": 18}`), tools: [WEATHER],
    text: { format: FORMAT } });
  assert.is(first.status, "completed");
  const [call] = calls(first);
  assert.is(call?.name, "get_weather");
  assert.is(call?.arguments, `{"city":"Paris"}`);
  assert.equal((call as { parsed_arguments?: unknown }).parsed_arguments, { city: "Paris" });
  assert.is(first.output_text, "");
  assert.is(first.usage, null);
  assert.equal(first.tools.map((t) => (t as OpenAI.Responses.FunctionTool).name), ["get_weather"]);

  const second = await alice.responses.create({ model: "scripted", previous_response_id: first.id, tools: [WEATHER],
    input: [{ type: "function_call_output", call_id: call!.call_id, output: "18 degrees, sunny" }] });
  assert.is.not(second.id, first.id);
  assert.match(second.id, /^resp_[0-9a-f]{32}$/);
  assert.is(second.status, "completed");
  assert.is(second.previous_response_id, first.id);
  assert.is(second.output_text, `{"celsius": 18}`);
  assert.is((second as unknown as { chat_id: string }).chat_id, (first as unknown as { chat_id: string }).chat_id);
  // The first Response keeps its calls: the receipt belongs to the newest one.
  const again = await alice.responses.retrieve(first.id);
  assert.equal(again.output, first.output.map((item) => {
    const { parsed_arguments: _, ...rest } = item as typeof item & { parsed_arguments?: unknown };
    return rest as never;
  }));
  // The tool result reached the chat as the client sent it, and the chat holds one request with one receipt.
  const chatId = (first as unknown as { chat_id: string }).chat_id;
  const { rows } = await stack.t.db.pool.query<{ result: unknown; requests: number }>(
    `select (select p -> 'result' from chat_public.chat_messages m, jsonb_array_elements(m.content) p
             where m.chat_id = $1 and m.role = 'tool' and p ->> 'tool_name' = 'get_weather') as result,
            (select count(*)::int from chat_public.structured_output_requests where chat_id = $1) as requests`, [chatId]);
  assert.equal(rows[0], { result: "18 degrees, sunny", requests: 1 });
  // Both Responses are announced when they complete: the first in the transaction that paused the turn for its
  // calls, the second with the receipt, so `retrieve(data.id)` reads the calls, then the value.
  const delivery = await stack.t.db.pool.query<{ subject_id: string; event_type: string }>(
    "select subject_id, event_type from chat_private.webhook_deliveries order by id");
  assert.equal(delivery.rows, [{ subject_id: first.id, event_type: "response.completed" },
    { subject_id: second.id, event_type: "response.completed" }]);
  // Bob cannot read or continue Alice's Responses.
  assert.is((await refusal(bob.responses.retrieve(second.id))).status, 404);
});

test("background and stream: the function calls stream as items with their arguments, then completed", async () => {
  const created = await alice.responses.create({ model: "scripted", background: true, input: weatherScript(`{"celsius": 3}`),
    tools: [WEATHER], text: { format: FORMAT } });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of await alice.responses.retrieve(created.id, { stream: true })) events.push(event);
  assert.equal(events.map((e) => e.type), ["response.created", "response.in_progress", "response.output_item.added",
    "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
    "response.completed"]);
  const done = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
  const callId = calls(done)[0]!.call_id;
  const stream = await alice.responses.create({ model: "scripted", previous_response_id: created.id, stream: true,
    input: [{ type: "function_call_output", call_id: callId, output: "3" }] });
  const final: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) final.push(event);
  const completed = final.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
  assert.is(completed.type, "response.completed");
  assert.is(completed.response.previous_response_id, created.id);
});

test("continuations are refused with their field: wrong call id, answered twice, no wait, other tools, no previous", async () => {
  const first = await alice.responses.create({ model: "scripted", input: weatherScript(`{"celsius": 1}`), tools: [WEATHER],
    text: { format: FORMAT } });
  const callId = calls(first)[0]!.call_id;
  const wrong = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: "call_nope", output: "x" }] }));
  assert.is(wrong.status, 400);
  assert.is(wrong.param, "input");
  assert.is(wrong.code, "tool_results_mismatch");
  const otherTools = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    tools: [{ ...WEATHER, name: "get_time" }], input: [{ type: "function_call_output", call_id: callId, output: "x" }] }));
  assert.is(otherTools.param, "tools");
  // New input (a follow-up) for a Response that waits for its calls' outputs.
  const message = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ role: "user", content: "hello" }] }));
  assert.is(message.param, "previous_response_id");
  const second = await alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] });
  assert.is(second.status, "completed");
  const twice = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] }));
  assert.is(twice.status, 400);
  assert.is(twice.param, "previous_response_id");
  const finished = await refusal(alice.responses.create({ model: "scripted", previous_response_id: second.id,
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] }));
  assert.is(finished.param, "previous_response_id");
  const notMine = await refusal(bob.responses.create({ model: "scripted", previous_response_id: second.id,
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] }));
  assert.is(notMine.param, "previous_response_id");
  const alone = await refusal(alice.responses.create({ model: "scripted",
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] }));
  assert.is(alone.param, "input[0].type");
  const hosted = await refusal(alice.responses.create({ model: "scripted", input: "x", tools: [{ type: "web_search" }] }));
  assert.is(hosted.param, "tools[0].type");
  const badName = await refusal(alice.responses.create({ model: "scripted", input: "x", tools: [{ ...WEATHER, name: "no spaces" }] }));
  assert.is(badName.param, "tools[0].name");
  const extraKey = await refusal(alice.responses.create({ model: "scripted", input: "x", tools: [{ ...WEATHER, cache: true } as never] }));
  assert.equal([extraKey.param, extraKey.code], ["tools[0].cache", "unknown_parameter"]);
  const badId = await refusal(alice.responses.create({ model: "scripted", previous_response_id: "resp_nope",
    input: [{ type: "function_call_output", call_id: callId, output: "1" }] }));
  assert.is(badId.param, "previous_response_id");
  const badOutput = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: callId, output: 18 as never }] }));
  assert.is(badOutput.param, "input[0].output");
  const onlyCalls = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call", call_id: callId, name: "get_weather", arguments: "{}" }] }));
  assert.is(onlyCalls.param, "input[0].type");
  const reserved = await refusal(alice.responses.create({ model: "scripted", input: "x", tools: [{ ...WEATHER, name: FINALIZER }] }));
  assert.is(reserved.param, "tools");
  assert.is(reserved.code, "reserved_tool_name");
});

test("cancel while the turn waits for client tools ends the request: cancelled, the chat free, idempotent", async () => {
  const first = await alice.responses.create({ model: "scripted", input: weatherScript(`{"celsius": 2}`), tools: [WEATHER],
    text: { format: FORMAT } });
  assert.is(first.status, "completed");
  const cancelled = await alice.responses.cancel(first.id);
  assert.is(cancelled.status, "cancelled");
  assert.equal(cancelled.output, []);
  assert.is((await alice.responses.cancel(first.id)).status, "cancelled");
  const chatId = (first as unknown as { chat_id: string }).chat_id;
  const { rows } = await stack.t.db.pool.query<{ status: string; code: string }>(
    `select c.status::text, r.error_code as code from chat_public.chats c
     join chat_public.structured_output_requests r on r.chat_id = c.id where c.id = $1`, [chatId]);
  assert.equal(rows, [{ status: "waiting", code: "interrupted" }]);
  const late = await refusal(alice.responses.create({ model: "scripted", previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: calls(first)[0]!.call_id, output: "2" }] }));
  assert.is(late.param, "previous_response_id");
});

test.run();
