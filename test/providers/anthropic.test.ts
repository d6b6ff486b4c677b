// Qualifies the anthropic adapter (Messages API, extended thinking) against the Anthropic
// mock over real HTTP (mock provider, not a live API).
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  assistantMessageFromStep,
  providerCapabilities,
  streamStep,
  type ReasoningPart,
  type ToolCallPart,
} from "../../src/providers/index.ts";
import { startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { API_KEY, configFor, finalizerTool, searchTool, userPrompt } from "../support/mock-providers/helpers.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/provider-streams/anthropic-thinking-tool-use.chunks.txt", import.meta.url));

let server: MockProviderServer;
test.before(async () => {
  server = await startMockProvider();
});
test.after(async () => {
  await server.close();
});

const MODEL = "claude-sonnet-4-5";
const thinking = { thinking: { type: "enabled" as const, budgetTokens: 2048 }, maxOutputTokens: 1000 };
const anthropic = (options = {}, model = MODEL) => configFor("anthropic", server.url, model, options);

test("request: thinking budget, max_tokens, tool_choice auto, strict per tool, schema unmodified", async () => {
  server.enqueue({ text: ["ok"] });
  await streamStep(anthropic({ ...thinking, strictTools: true }), { prompt: userPrompt("hi", "sys"), tools: [searchTool, finalizerTool] });
  const req = server.requests.at(-1)!;
  assert.is(req.path, "/v1/messages");
  assert.is(req.headers["x-api-key"], API_KEY);
  const body = req.body;
  assert.equal(body.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.is(body.max_tokens, 3048);
  assert.equal(body.tool_choice, { type: "auto" });
  assert.equal(body.tools[0].input_schema, searchTool.inputSchema);
  assert.equal(body.tools[1].input_schema, finalizerTool.inputSchema);
  assert.is(body.tools[0].strict, true);
  assert.is(body.tools[1].strict, false);
  assert.equal(body.system, [{ type: "text", text: "sys" }]);
});

test("decode: thinking with signature, text, duplicate-key tool input", async () => {
  server.enqueue({
    reasoning: { text: "consider", signature: "sig-123" },
    text: ["Looking."],
    toolCalls: [{ id: "toolu_1", name: "search", fragments: ['{"q":"a",', '"q":"b"}'] }],
  });
  const r = await streamStep(anthropic(thinking), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "tool-calls");
  assert.is(r.rawFinishReason, "tool_use");
  assert.equal(r.parts[0], { type: "reasoning", text: "consider", replay: { anthropic: { signature: "sig-123" } } });
  assert.is((r.parts[2] as ToolCallPart).args, '{"q":"a","q":"b"}');
});

test("round-trip: the thinking signature is sent back on the next request", async () => {
  server.enqueue({ reasoning: { text: "consider", signature: "sig-RT" }, toolCalls: [{ id: "toolu_rt", name: "search", fragments: ['{"q":"x"}'] }] });
  const first = await streamStep(anthropic(thinking), { prompt: userPrompt("hi"), tools: [searchTool] });
  server.enqueue({ text: ["done"] });
  await streamStep(anthropic(thinking), {
    prompt: [
      ...userPrompt("hi"),
      assistantMessageFromStep(first),
      { role: "tool", content: [{ type: "tool-result", tool_call_id: "toolu_rt", tool_name: "search", result: { n: 1 }, is_error: false }] },
    ],
    tools: [searchTool],
  });
  const assistant = server.requests.at(-1)!.body.messages[1];
  assert.is(assistant.role, "assistant");
  assert.equal(assistant.content[0], { type: "thinking", thinking: "consider", signature: "sig-RT" });
  assert.equal(assistant.content[1].type, "tool_use");
  assert.equal(assistant.content[1].input, { q: "x" });
});

test("redacted thinking keeps its data for replay", async () => {
  server.enqueue({ reasoning: { text: "", redactedData: "opaque-blob" }, text: ["ok"] });
  const r = await streamStep(anthropic(thinking), { prompt: userPrompt("hi"), tools: [] });
  assert.equal(r.parts[0], { type: "reasoning", text: "", replay: { anthropic: { redactedData: "opaque-blob" } } });
});

test("forced tool choice with thinking is downgraded by the package → configuration_error", async () => {
  for (const toolChoice of ["required", { tool: "coder_structured_output" }] as const) {
    server.enqueue({ text: ["never used"] });
    const r = await streamStep(anthropic(thinking), { prompt: userPrompt("hi"), tools: [searchTool, finalizerTool], toolChoice });
    assert.is(r.finish, "error");
    assert.is(r.error?.kind, "configuration_error");
    assert.ok(r.warnings.some((w) => w.feature === "toolChoice"));
  }
  assert.is(providerCapabilities(anthropic(thinking)).forcedToolChoice, false);
});

test("strict requested on a model without strict tools → configuration_error", async () => {
  const old = anthropic({ strictTools: true }, "claude-sonnet-4-20250514");
  assert.is(providerCapabilities(old).strictPerTool, false);
  server.enqueue({ text: ["never used"] });
  const r = await streamStep(old, { prompt: userPrompt("hi"), tools: [searchTool, finalizerTool] });
  assert.is(r.error?.kind, "configuration_error");
});

test("max_tokens inside tool_use → length, call incomplete", async () => {
  server.enqueue({ toolCalls: [{ name: "search", fragments: ['{"q":"ab'] }], finish: "length" });
  const r = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "length");
  assert.is(r.rawFinishReason, "max_tokens");
  const call = r.parts[0] as ToolCallPart;
  assert.is(call.incomplete, true);
});

test("pause_turn → stop with pauseTurn; refusal → content-filter", async () => {
  server.enqueue({ text: ["searching"], finish: "pause-turn" });
  const paused = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [] });
  assert.equal([paused.finish, paused.rawFinishReason, paused.pauseTurn], ["stop", "pause_turn", true]);
  server.enqueue({ refusal: "no" });
  const refused = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(refused.finish, "content-filter");
});

test("overloaded: HTTP 529 and an in-stream overloaded_error are retryable", async () => {
  server.enqueue({ kind: "http-error", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
  const http = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [] });
  assert.equal({ ...http.error }, { retryable: true, kind: "overloaded", status: 529, message: "provider error: overloaded (HTTP 529)" });
  server.enqueue({ text: ["part"], streamError: { type: "overloaded_error", message: "Overloaded SECRET" } });
  const inStream = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(inStream.finish, "error");
  assert.is(inStream.error?.retryable, true);
  assert.is(inStream.error?.kind, "overloaded");
  assert.is((inStream.parts[0] as { text: string }).text, "part");
  assert.not.ok(JSON.stringify(inStream).includes("SECRET"));
});

test("HTTP 400 is terminal and sanitized", async () => {
  server.enqueue({ kind: "http-error", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "schema SECRET" } } });
  const r = await streamStep(anthropic(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.equal({ ...r.error }, { retryable: false, kind: "bad_request", status: 400, message: "provider error: bad_request (HTTP 400)" });
});

test("recorded-stream fixture (thinking + tool_use) replays intact", async () => {
  server.enqueue({ kind: "fixture", path: FIXTURE });
  const r = await streamStep(anthropic(thinking), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "tool-calls");
  const reasoning = r.parts[0] as ReasoningPart;
  assert.is(reasoning.text, "The user wants the build command. I should search first.");
  assert.equal(reasoning.replay, { anthropic: { signature: "EqQBCkYIBxgCKkB-fixture-signature==" } });
  assert.is((r.parts[2] as ToolCallPart).args, '{"q": "say \\"hi\\"", "q": "b"}');
  assert.is(r.usage.inputTokens, 412);
});

test.run();
