// /v1/chat/completions through the official `openai` npm SDK: chat.completions.parse fills `parsed` from the
// exact valueJson, a refusal is message.refusal (content null), a failed request is a 422 with chatd's code (never
// retried by the SDK), and a turn that outlives the bounded wait is refused with the Response id to retrieve.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type OpenAI from "openai";
import { APIError } from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";
import { client, finalize, startLiveStack, type LiveStack } from "./sdk.ts";

let stack: LiveStack;
let sdk: OpenAI;

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  sdk = client(stack, stack.users.alice!.token);
});
test.after(() => {
  delete process.env.CHATD_OPENAI_CHAT_WAIT_SECONDS;
  return stack.close();
});

async function refusal(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error("expected an API error");
}

const Count = z.object({ n: z.number().int(), label: z.string() });

test("chat.completions.parse: content is the exact valueJson, parsed is filled, finish_reason stop", async () => {
  const completion = await sdk.chat.completions.parse({ model: "scripted", response_format: zodResponseFormat(Count, "count"),
    messages: [{ role: "user", content: finalize(`{"n": 42, "label": "x"}`) }] });
  const choice = completion.choices[0]!;
  assert.is(choice.finish_reason, "stop");
  assert.is(choice.message.content, `{"n": 42, "label": "x"}`);
  assert.is(choice.message.parsed?.label, "x");
  assert.is(choice.message.refusal, null);
  assert.match(completion.id, /^chatcmpl-[0-9a-f]{32}$/);
  const plain = await sdk.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: finalize(`"just text"`) }] });
  assert.is(plain.choices[0]!.message.content, "just text");
});

test("a refusal is message.refusal with content null; a failure is a 422 with chatd's code", async () => {
  const refused = await sdk.chat.completions.parse({ model: "scripted", response_format: zodResponseFormat(Count, "count"),
    messages: [{ role: "user", content: JSON.stringify({ script: [{ text: "no", finish: "content-filter" }] }) }] });
  assert.is(refused.choices[0]!.message.content, null);
  assert.ok(refused.choices[0]!.message.refusal);
  assert.is(refused.choices[0]!.message.parsed, null);
  const failed = await refusal(sdk.chat.completions.create({ model: "scripted",
    response_format: zodResponseFormat(Count, "count"),
    messages: [{ role: "user", content: JSON.stringify({ script: [{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }] }) }] }));
  assert.is(failed.status, 422);
  assert.is(failed.code, "not_produced");
  const bad = await refusal(sdk.chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "x" }],
    response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "nope" } } } } } }));
  assert.is(bad.status, 400);
  assert.is(bad.param, "response_format.json_schema.schema");
});

test("the wait is bounded: a longer turn is a 422 naming its Response, which goes on and can be retrieved", async () => {
  process.env.CHATD_OPENAI_CHAT_WAIT_SECONDS = "1";
  try {
    const error = await refusal(sdk.chat.completions.create({ model: "scripted",
      messages: [{ role: "user", content: finalize(`"slow"`, { delay_ms: 60_000 }) }] }));
    assert.is(error.status, 422);
    assert.is(error.code, "turn_still_running");
    const id = /resp_[0-9a-f]{32}/.exec(error.message)?.[0];
    assert.ok(id, error.message);
    assert.is((await sdk.responses.retrieve(id!)).status, "in_progress");
    assert.is((await sdk.responses.cancel(id!)).status, "cancelled");
  } finally {
    delete process.env.CHATD_OPENAI_CHAT_WAIT_SECONDS;
  }
});

test.run();
