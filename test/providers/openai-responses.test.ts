// Qualifies the openai-responses adapter against the Responses mock over real HTTP
// (mock provider, not a live API).
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { assistantMessageFromStep, streamStep, type ReasoningPart, type ToolCallPart } from "../../src/providers/index.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { configFor, finalizerTool, searchTool, userPrompt } from "../support/mock-providers/helpers.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/provider-streams/openai-responses-reasoning-tool.chunks.txt", import.meta.url));

let server: MockProviderServer;
test.before(async () => {
  server = await startMockProvider();
});
test.after(async () => {
  await server.close();
});

const responses = (options = {}) => configFor("openai-responses", server.url, "gpt-5", options);

test("request: strict sent per tool (on for ordinary tools, off for the finalizer), store:false, effort", async () => {
  server.enqueue({ text: ["ok"] });
  await streamStep(responses({ strictTools: true, reasoningEffort: "low", reasoningSummary: "auto" }), {
    prompt: userPrompt("hi"),
    tools: [searchTool, finalizerTool],
  });
  const body = server.requests.at(-1)!.body;
  assert.is(server.requests.at(-1)!.path, "/v1/responses");
  assert.equal(body.tools[0], {
    type: "function",
    name: "search",
    description: "Search the workspace",
    parameters: searchTool.inputSchema,
    strict: true,
  });
  assert.is(body.tools[1].strict, false);
  assert.equal(body.tools[1].parameters, finalizerTool.inputSchema);
  assert.is(body.tool_choice, "auto");
  assert.is(body.store, false);
  assert.ok(body.include.includes("reasoning.encrypted_content"));
  assert.equal(body.reasoning, { effort: "low", summary: "auto" });
});

test("decode: reasoning with encrypted content, text, duplicate-key arguments", async () => {
  server.enqueue({
    reasoning: { text: "plan", encryptedContent: "enc-1", itemId: "rs_1" },
    text: ["Hi ", "there"],
    toolCalls: [{ id: "call_1", name: "search", fragments: ['{"q":"a",', '"q":"b"}'] }],
  });
  const r = await streamStep(responses(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "tool-calls");
  const [reasoning, text, call] = r.parts as [ReasoningPart, { text: string }, ToolCallPart];
  assert.equal(reasoning, { type: "reasoning", text: "plan", replay: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc-1" } } });
  assert.is(text.text, "Hi there");
  assert.is(call.args, '{"q":"a","q":"b"}');
  assert.is(call.tool_call_id, "call_1");
});

test("round-trip: reasoning item (id + encrypted content) and raw arguments are replayed", async () => {
  server.enqueue({
    reasoning: { text: "plan", encryptedContent: "enc-XYZ", itemId: "rs_9" },
    toolCalls: [{ id: "call_9", name: "search", fragments: ['{"q":"a","q":"b"}'] }],
  });
  const first = await streamStep(responses(), { prompt: userPrompt("hi"), tools: [searchTool] });
  server.enqueue({ text: ["done"] });
  await streamStep(responses(), {
    prompt: [
      ...userPrompt("hi"),
      assistantMessageFromStep(first),
      { role: "tool", content: [{ type: "tool-result", tool_call_id: "call_9", tool_name: "search", result: "none", is_error: false }] },
    ],
    tools: [searchTool],
  });
  const input = server.requests.at(-1)!.body.input;
  assert.equal(input[1], { type: "reasoning", id: "rs_9", encrypted_content: "enc-XYZ", summary: [{ type: "summary_text", text: "plan" }] });
  assert.is(input[2].type, "function_call");
  assert.is(input[2].call_id, "call_9");
  assert.is(input[2].arguments, '{"q":"a","q":"b"}');
  assert.equal(input[3], { type: "function_call_output", call_id: "call_9", output: "none" });
});

test("response.incomplete (max_output_tokens) mid call → length, call incomplete", async () => {
  server.enqueue({ toolCalls: [{ name: "search", fragments: ['{"q":"a'] }], finish: "length" });
  const r = await streamStep(responses(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "length");
  assert.is(r.rawFinishReason, "max_output_tokens");
  const call = r.parts.find((p) => p.type === "tool-call") as ToolCallPart | undefined;
  // The package emits no tool-call part here; if a partial one exists it must be incomplete.
  if (call != null) assert.is(call.incomplete, true);
});

test("error event before any output is a retryable provider error", async () => {
  server.enqueue({ kind: "raw", events: [{ type: "error", sequence_number: 0, code: "server_error", message: "boom SECRET", param: null }] });
  const r = await streamStep(responses(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(r.finish, "error");
  assert.is(r.error?.retryable, true);
  assert.not.ok(JSON.stringify(r).includes("SECRET"));
});

test("abort while held: interrupted with the streamed text", async () => {
  const release = barrier();
  const reached = barrier();
  server.enqueue({ text: ["first ", "second"], hold: { afterEvents: 5, release: release.promise, reached: reached.resolve } });
  const controller = new AbortController();
  const gotText = barrier();
  const pending = streamStep(responses(), {
    prompt: userPrompt("hi"),
    tools: [],
    abortSignal: controller.signal,
    onEvent: (e) => {
      if (e.type === "text-delta") gotText.resolve();
    },
  });
  await reached.promise;
  await gotText.promise;
  controller.abort();
  const r = await pending;
  release.resolve();
  assert.is(r.finish, "interrupted");
  assert.is((r.parts[0] as { text: string }).text, "first ");
});

test("recorded-stream fixture replays: reasoning replay data and exact argument text", async () => {
  server.enqueue({ kind: "fixture", path: FIXTURE });
  const r = await streamStep(configFor("openai-responses", server.url, "gpt-5.1"), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "tool-calls");
  assert.is(r.responseId, "resp_fixture_1");
  const reasoning = r.parts[0] as ReasoningPart;
  assert.is(reasoning.text, "**Planning the search**\n\nLook up both terms.");
  assert.equal(reasoning.replay, { openai: { itemId: "rs_fixture_1", reasoningEncryptedContent: "gAAAAB-fixture-encrypted-2" } });
  const call = r.parts[1] as ToolCallPart;
  assert.is(call.args, '{"q":"a", "q":"b"}');
  assert.is(r.usage.reasoningTokens, 40);
});

test.run();
