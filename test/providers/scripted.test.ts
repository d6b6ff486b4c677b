// The built-in scripted provider (deterministic, offline) through the same streamStep path.
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  assistantMessageFromStep,
  exampleFromSchema,
  streamStep,
  type ChatPrompt,
  type ModelConfig,
  type StepResult,
  type ToolCallPart,
  type ToolSpec,
} from "../../src/providers/index.ts";
import { finalizerInputSchema } from "../../src/structured/finalizer.ts";
import { collectEvents, finalizerTool, searchTool, userPrompt } from "../support/mock-providers/helpers.ts";

const scripted: ModelConfig = { provider: "scripted", model: "scripted-demo", contextLimit: 100_000, options: {} };
const fsTools: ToolSpec[] = [
  { name: "list_files", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "read_file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
];

function script(steps: unknown[], nonce = ""): ChatPrompt {
  return userPrompt(JSON.stringify({ script: steps, nonce }));
}

/** Appends a step and tool results (one per call) to the prompt, as the loop would. */
function advance(prompt: ChatPrompt, step: StepResult, results: Record<string, unknown> = {}): ChatPrompt {
  const calls = step.parts.filter((p): p is ToolCallPart => p.type === "tool-call");
  const next: ChatPrompt = [...prompt, assistantMessageFromStep(step)];
  if (calls.length > 0) {
    next.push({
      role: "tool",
      content: calls.map((c) => ({
        type: "tool-result" as const,
        tool_call_id: c.tool_call_id,
        tool_name: c.tool_name,
        result: (results[c.tool_name] ?? "ok") as string,
        is_error: false,
      })),
    });
  }
  return next;
}

test("script: text step, then tool calls with args and args_raw, then out-of-script text", async () => {
  const steps = [
    { text: "first answer", reasoning: "thinking aloud" },
    { tool_calls: [{ name: "search", args: { q: "a" } }, { name: "search", args_raw: '{"q":"a","q":"b"}' }] },
  ];
  let prompt = script(steps);
  const { events, onEvent } = collectEvents();
  const s1 = await streamStep(scripted, { prompt, tools: [searchTool], onEvent });
  assert.is(s1.finish, "stop");
  assert.is(s1.provider, "scripted");
  assert.equal(s1.parts, [
    { type: "reasoning", text: "thinking aloud" },
    { type: "text", text: "first answer" },
  ]);
  assert.ok(events.filter((e) => e.type === "text-delta").length > 1);

  prompt = advance(prompt, s1);
  const s2 = await streamStep(scripted, { prompt, tools: [searchTool] });
  assert.is(s2.finish, "tool-calls");
  const calls = s2.parts as ToolCallPart[];
  assert.is(calls[0]!.args, '{"q":"a"}');
  assert.is(calls[1]!.args, '{"q":"a","q":"b"}');
  assert.is.not(calls[0]!.tool_call_id, calls[1]!.tool_call_id);

  prompt = advance(prompt, s2);
  const s3 = await streamStep(scripted, { prompt, tools: [searchTool] });
  assert.is(s3.finish, "stop");
  assert.match((s3.parts[0] as { text: string }).text, /scripted provider/);
});

test("script: finish length / content-filter / error", async () => {
  const length = await streamStep(scripted, {
    prompt: script([{ tool_calls: [{ name: "search", args_raw: '{"q":"tr' }], finish: "length" }]),
    tools: [searchTool],
  });
  assert.is(length.finish, "length");
  assert.is((length.parts[0] as ToolCallPart).incomplete, true);

  const filtered = await streamStep(scripted, { prompt: script([{ text: "no", finish: "content-filter" }]), tools: [] });
  assert.is(filtered.finish, "content-filter");

  const failed = await streamStep(scripted, { prompt: script([{ text: "partial", finish: "error" }]), tools: [] });
  assert.is(failed.finish, "error");
  assert.is(failed.error?.retryable, false);
});

test("script: error_status 429 fails once (retryable), the retry plays the step", async () => {
  const prompt = script([{ text: "after retry", error_status: 429 }], String(Math.random()));
  const first = await streamStep(scripted, { prompt, tools: [] });
  assert.equal({ ...first.error }, { retryable: true, kind: "rate_limit", status: 429, message: "provider error: rate_limit (HTTP 429)" });
  const second = await streamStep(scripted, { prompt, tools: [] });
  assert.is(second.finish, "stop");
  assert.equal(second.parts, [{ type: "text", text: "after retry" }]);
});

test("script: abort during delay_ms → interrupted with the text so far", async () => {
  const controller = new AbortController();
  const pending = streamStep(scripted, {
    prompt: script([{ text: "slow answer", delay_ms: 60_000 }]),
    tools: [],
    abortSignal: controller.signal,
    onEvent: (e) => {
      if (e.type === "text-delta" && e.delta === "answer") controller.abort();
    },
  });
  const r = await pending;
  assert.is(r.finish, "interrupted");
  assert.equal(r.parts, [{ type: "text", text: "slow answer" }]);
});

test("default plan: list, read the first listed file, summarise", async () => {
  let prompt = userPrompt("What is in my workspace?");
  const s1 = await streamStep(scripted, { prompt, tools: fsTools });
  const list = s1.parts.find((p) => p.type === "tool-call") as ToolCallPart;
  assert.is(list.tool_name, "list_files");
  assert.is(list.args, '{"path":"."}');
  prompt = advance(prompt, s1, { list_files: JSON.stringify([{ path: "src", type: "directory" }, { path: "README.md", type: "file" }]) });

  const s2 = await streamStep(scripted, { prompt, tools: fsTools });
  const read = s2.parts[0] as ToolCallPart;
  assert.equal([read.tool_name, read.args], ["read_file", '{"path":"README.md"}']);
  prompt = advance(prompt, s2, { read_file: "# Hello" });

  const s3 = await streamStep(scripted, { prompt, tools: fsTools });
  assert.is(s3.finish, "stop");
  const text = (s3.parts[0] as { text: string }).text;
  assert.match(text, /README\.md/);
  assert.match(text, /scripted provider/);
});

test("default plan with the finalizer: calls it with a value built from the schema", async () => {
  let prompt = userPrompt("Report");
  const tools = [...fsTools, finalizerTool];
  const s1 = await streamStep(scripted, { prompt, tools });
  prompt = advance(prompt, s1, { list_files: "notes.txt\n" });
  const s2 = await streamStep(scripted, { prompt, tools });
  assert.is((s2.parts[0] as ToolCallPart).args, '{"path":"notes.txt"}');
  prompt = advance(prompt, s2, { read_file: "x" });
  const s3 = await streamStep(scripted, { prompt, tools });
  const fin = s3.parts[0] as ToolCallPart;
  assert.is(fin.tool_name, "coder_structured_output");
  assert.is(fin.args, '{"output":{"command":"example"}}');
  prompt = advance(prompt, s3, { coder_structured_output: "accepted" });
  const s4 = await streamStep(scripted, { prompt, tools });
  assert.is(s4.finish, "stop");
});

test("default plan without tools answers in text, labelled", async () => {
  const r = await streamStep(scripted, { prompt: userPrompt("hello"), tools: [] });
  assert.match((r.parts[0] as { text: string }).text, /scripted provider/);
});

// What Pydantic's model_json_schema() writes for a model with a nested model, an Optional and a
// recursive list (a comment thread).
const pydanticSchema = {
  $defs: {
    Author: { type: "object", properties: { name: { type: "string", minLength: 2 }, email: { type: "string", format: "email" } }, required: ["name", "email"] },
    Comment: {
      type: "object",
      properties: {
        author: { $ref: "#/$defs/Author" },
        text: { type: "string" },
        parent: { anyOf: [{ $ref: "#/$defs/Comment" }, { type: "null" }] },
        replies: { type: "array", items: { $ref: "#/$defs/Comment" }, minItems: 1 },
      },
      required: ["author", "text", "parent", "replies"],
    },
  },
  type: "object",
  properties: { thread: { $ref: "#/$defs/Comment" }, "a/b~c": { type: "integer", minimum: 5 }, ref: { $ref: "#/properties/a~1b~0c" } },
  required: ["thread", "ref"],
};

test("exampleFromSchema: local $refs are followed, recursion is bounded", () => {
  const value = exampleFromSchema(pydanticSchema) as { thread: Record<string, unknown>; ref: unknown };
  assert.equal(value.thread.author, { name: "example", email: "user@example.com" });
  // parent: the anyOf branch that does not recurse; replies: one item, whose own replies end at the depth bound.
  assert.is(value.thread.parent, null);
  assert.is(value.ref, 5);
  let depth = 0;
  for (let c: unknown = value.thread; Array.isArray((c as { replies?: unknown[] } | null)?.replies); c = (c as { replies: unknown[] }).replies[0]) depth++;
  assert.ok(depth > 1 && depth <= 32, `recursion depth ${depth}`);
  assert.is(exampleFromSchema({ $ref: "#/$defs/missing" }), null);
  assert.is(exampleFromSchema({ $ref: "https://example.com/schema.json" }), null);
  assert.is(exampleFromSchema({ $ref: "#" }), null);
  // A tree that requires both children would double at every level: the value count is bounded.
  const tree = exampleFromSchema({ type: "object", properties: { l: { $ref: "#" }, r: { $ref: "#" } }, required: ["l", "r"] });
  assert.ok(JSON.stringify(tree).length < 200_000);
});

test("default plan: the finalizer's example follows the caller's $refs, rebased into its input schema", async () => {
  const tool: ToolSpec = { name: "coder_structured_output", inputSchema: finalizerInputSchema({ $defs: { Name: { type: "string", minLength: 9 } }, type: "object", properties: { n: { $ref: "#/$defs/Name" } }, required: ["n"] }) as ToolSpec["inputSchema"] };
  const s1 = await streamStep(scripted, { prompt: userPrompt("Report"), tools: [tool] });
  assert.is((s1.parts[0] as ToolCallPart).args, '{"output":{"n":"examplexx"}}');
});

test("exampleFromSchema: literal hints and simple types", () => {
  assert.is(exampleFromSchema({ const: 42 }), 42);
  assert.is(exampleFromSchema({ enum: ["b", "a"] }), "b");
  assert.is(exampleFromSchema({ type: "string", examples: ["ex"] }), "ex");
  assert.is(exampleFromSchema({ type: "integer", default: 7 }), 7);
  assert.is(exampleFromSchema({ type: "string" }), "example");
  assert.is(exampleFromSchema({ type: "string", format: "date" }), "2024-01-01");
  assert.is(exampleFromSchema({ type: "string", minLength: 10 }), "examplexxx");
  assert.is(exampleFromSchema({ type: "number" }), 0);
  assert.is(exampleFromSchema({ type: "integer", minimum: 3 }), 3);
  assert.is(exampleFromSchema({ type: "integer", exclusiveMinimum: 3 }), 4);
  assert.is(exampleFromSchema({ type: "boolean" }), true);
  assert.is(exampleFromSchema({ type: "null" }), null);
  assert.equal(exampleFromSchema({ type: "array", items: { type: "string" } }), []);
  assert.equal(exampleFromSchema({ type: "array", items: { type: "integer" }, minItems: 2 }), [0, 0]);
  assert.is(exampleFromSchema({ type: ["null", "string"] }), "example");
  assert.is(exampleFromSchema({ anyOf: [{ type: "boolean" }, { type: "string" }] }), true);
  assert.equal(
    exampleFromSchema({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "object", properties: { c: { enum: [1] } }, required: ["c"] }, opt: { type: "string" } },
      required: ["a", "b"],
    }),
    { a: "example", b: { c: 1 } },
  );
  assert.equal(
    exampleFromSchema({ allOf: [{ type: "object", properties: { x: { type: "string" } }, required: ["x"] }, { required: ["y"] }] }),
    { x: "example", y: null },
  );
  assert.is(exampleFromSchema({}), null);
});

test.run();
