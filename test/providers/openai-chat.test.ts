// Qualifies the openai-chat and openai-compatible adapters against the Chat Completions
// mock over real HTTP (mock provider, not a live API).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { streamStep, type ToolCallPart } from "../../src/providers/index.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { API_KEY, collectEvents, configFor, finalizerTool, searchTool, userPrompt } from "../support/mock-providers/helpers.ts";

let server: MockProviderServer;

test.before(async () => {
  server = await startMockProvider();
});
test.after(async () => {
  await server.close();
});

const chat = (options = {}) => configFor("openai-chat", server.url, "gpt-4.1", options);
const compatible = (options = {}) => configFor("openai-compatible", server.url, "llama3.1", options);

test("request: tools passed unmodified, strict per tool, tool_choice auto, key only in header", async () => {
  server.enqueue({ text: ["ok"] });
  await streamStep(chat({ strictTools: true }), { prompt: userPrompt("hi", "be brief"), tools: [searchTool, finalizerTool] });
  const req = server.requests.at(-1)!;
  assert.is(req.path, "/v1/chat/completions");
  assert.is(req.headers.authorization, `Bearer ${API_KEY}`);
  assert.is(req.body.stream, true);
  assert.is(req.body.tool_choice, "auto");
  assert.equal(req.body.tools[0].function.parameters, searchTool.inputSchema);
  assert.equal(req.body.tools[1].function.parameters, finalizerTool.inputSchema);
  assert.is(req.body.tools[0].function.strict, true);
  assert.is(req.body.tools[1].function.strict, false);
  assert.equal(req.body.messages[0], { role: "system", content: "be brief" });
});

test("request: openai-compatible omits strict unless configured; finalizer stays false", async () => {
  server.enqueue({ text: ["ok"] });
  await streamStep(compatible(), { prompt: userPrompt("hi"), tools: [searchTool, finalizerTool] });
  const tools = server.requests.at(-1)!.body.tools;
  assert.not.ok("strict" in tools[0].function);
  assert.is(tools[1].function.strict, false);
});

test("decode: text, reasoning_content (compatible) and raw arguments with duplicate keys", async () => {
  server.enqueue({
    reasoning: { text: "let me think" },
    text: ["Hel", "lo"],
    toolCalls: [{ id: "call_a", name: "search", fragments: ['{"q":"a",', '"q":"b"}'] }],
  });
  const { events, onEvent } = collectEvents();
  const r = await streamStep(compatible(), { prompt: userPrompt("hi"), tools: [searchTool], onEvent });
  assert.is(r.finish, "tool-calls");
  assert.is(r.rawFinishReason, "tool_calls");
  assert.equal(
    r.parts.map((p) => p.type),
    ["reasoning", "text", "tool-call"],
  );
  const call = r.parts[2] as ToolCallPart;
  assert.is(call.args, '{"q":"a","q":"b"}');
  assert.is(call.tool_call_id, "call_a");
  assert.is(call.incomplete, undefined);
  const fragments = events.filter((e) => e.type === "tool-input-delta").map((e) => (e.type === "tool-input-delta" ? e.delta : ""));
  assert.equal(fragments, ['{"q":"a",', '"q":"b"}']);
  assert.ok(events.some((e) => e.type === "tool-input-delta" && e.toolCallId === "call_a"));
  assert.is(r.usage.inputTokens, 10);
});

test("truncated stream (no finish, no [DONE]) → interrupted, tool call incomplete", async () => {
  server.enqueue({ toolCalls: [{ name: "search", fragments: ['{"q":"ab'] }], truncate: true });
  const r = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "interrupted");
  assert.equal({ kind: r.error?.kind, retryable: r.error?.retryable }, { kind: "incomplete_stream", retryable: true });
  const call = r.parts[0] as ToolCallPart;
  assert.is(call.args, '{"q":"ab');
  assert.is(call.incomplete, true);
});

test("finish_reason length → length; parsable arguments are still incomplete", async () => {
  server.enqueue({ toolCalls: [{ name: "search", fragments: ['{"q":"a"}'] }], finish: "length" });
  const r = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r.finish, "length");
  assert.is(r.rawFinishReason, "length");
  assert.is((r.parts[0] as ToolCallPart).incomplete, true);
});

test("refusal → content-filter", async () => {
  server.enqueue({ refusal: "I can't help with that." });
  const r = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(r.finish, "content-filter");
});

test("abort mid-stream: request aborted, partial text kept, tool call incomplete", async () => {
  const release = barrier();
  const reached = barrier();
  server.enqueue({
    text: ["partial ", "answer"],
    toolCalls: [{ name: "search", fragments: ['{"q":', '"x"}'] }],
    hold: { afterEvents: 4, release: release.promise, reached: reached.resolve },
  });
  const controller = new AbortController();
  const seen = barrier();
  let deltas = 0;
  const pending = streamStep(chat(), {
    prompt: userPrompt("hi"),
    tools: [searchTool],
    abortSignal: controller.signal,
    onEvent: (e) => {
      if (e.type === "tool-input-delta" && ++deltas === 1) seen.resolve();
    },
  });
  await reached.promise;
  await seen.promise;
  controller.abort();
  const r = await pending;
  release.resolve();
  assert.is(r.finish, "interrupted");
  assert.is(r.error, undefined);
  assert.equal(r.parts[0], { type: "text", text: "partial answer" });
  const call = r.parts[1] as ToolCallPart;
  assert.is(call.args, '{"q":');
  assert.is(call.incomplete, true);
});

test("request release: an early exit aborts the HTTP request; a stream read to its end has nothing to release", async () => {
  const signals: AbortSignal[] = [];
  const runtime = {
    fetch: (...[input, init]: Parameters<typeof fetch>) => {
      if (init?.signal != null) signals.push(init.signal);
      return fetch(input, init);
    },
  };
  server.enqueue({ text: ["all ", "of it"] });
  const done = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [] }, runtime);
  assert.is(done.finish, "stop");
  assert.is(signals.length, 1);
  assert.is(signals[0]!.aborted, false);
  server.enqueue({ text: ["never ", "read ", "to the end"] });
  const bug = new Error("the caller's bug");
  try {
    await streamStep(chat(), { prompt: userPrompt("hi"), tools: [], onEvent: () => { throw bug; } }, runtime);
    assert.unreachable("the callback's error propagates");
  } catch (error) {
    assert.is(error, bug);
  }
  assert.is(signals.length, 2);
  assert.is(signals[1]!.aborted, true);
});

test("HTTP 429 is retryable, 400 terminal; messages carry no body text or key", async () => {
  server.enqueue({ kind: "http-error", status: 429, body: { error: { message: "slow down SECRET-BODY" } } });
  const r429 = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(r429.finish, "error");
  assert.equal({ ...r429.error, message: undefined }, { retryable: true, kind: "rate_limit", status: 429, message: undefined });

  server.enqueue({ kind: "http-error", status: 400, body: { error: { message: `bad schema {"secret":1} ${API_KEY}` } } });
  const r400 = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [searchTool] });
  assert.is(r400.error?.retryable, false);
  assert.is(r400.error?.status, 400);
  for (const r of [r429, r400]) {
    const text = JSON.stringify(r);
    assert.not.ok(text.includes("SECRET-BODY"));
    assert.not.ok(text.includes(API_KEY));
    assert.not.ok(text.includes("secret"));
  }
  assert.is(r400.error?.message, "provider error: bad_request (HTTP 400)");
});

test("500 and connection refused are retryable", async () => {
  server.enqueue({ kind: "http-error", status: 500 });
  const r500 = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [] });
  assert.is(r500.error?.retryable, true);
  const closed = await startMockProvider();
  const url = closed.url;
  await closed.close();
  const refused = await streamStep(configFor("openai-chat", url, "gpt-4.1"), { prompt: userPrompt("hi"), tools: [] });
  assert.equal({ kind: refused.error?.kind, retryable: refused.error?.retryable }, { kind: "network", retryable: true });
});

test("a dropped tool (provider tool on chat) is a configuration_error", async () => {
  server.enqueue({ text: ["never read"] });
  const r = await streamStep(
    chat({ providerTools: [{ id: "openai.web_search", name: "web_search", args: {} }] }),
    { prompt: userPrompt("hi"), tools: [searchTool] },
  );
  assert.is(r.finish, "error");
  assert.is(r.error?.kind, "configuration_error");
  assert.is(r.error?.retryable, false);
  assert.ok(r.warnings.some((w) => w.feature?.startsWith("tool type")));
});

test("a rewritten tool schema is recorded, not an error", async () => {
  server.enqueue({ text: ["fine"] });
  const mapTool = {
    name: "tag_map",
    inputSchema: { type: "object", properties: { tags: { type: "object", propertyNames: { pattern: "^[a-z]+$" } } } },
  };
  const { events, onEvent } = collectEvents();
  const r = await streamStep(chat(), { prompt: userPrompt("hi"), tools: [searchTool, mapTool], onEvent });
  assert.is(r.finish, "stop");
  assert.is(r.error, undefined);
  assert.equal(r.toolSchemaRewrites, [{ tool: "tag_map", detail: "JSON Schema propertyNames removed by the provider package" }]);
  assert.ok(events.some((e) => e.type === "warnings"));
});

test("replay: tool call raw text and tool result go back in the next request", async () => {
  server.enqueue({ text: ["done"] });
  await streamStep(chat(), {
    prompt: [
      ...userPrompt("hi"),
      { role: "assistant", content: [{ type: "tool-call", tool_call_id: "c1", tool_name: "search", args: '{"q":"a","q":"b"}' }] },
      { role: "tool", content: [{ type: "tool-result", tool_call_id: "c1", tool_name: "search", result: { hits: 0 }, is_error: false }] },
    ],
    tools: [searchTool],
  });
  const messages = server.requests.at(-1)!.body.messages;
  assert.is(messages[1].tool_calls[0].function.arguments, '{"q":"a","q":"b"}');
  assert.equal(messages[2], { role: "tool", tool_call_id: "c1", content: '{"hits":0}' });
});

test.run();
