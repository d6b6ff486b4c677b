// The finalizer rules, decided on raw argument text (no provider, no database).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileSchema, validateValue, type CompiledSchema } from "../../src/structured/index.ts";
import { parseJsonSafe } from "../../src/structured/json-boundary.ts";
import {
  budgetExhausted, exhaustionCode, FINALIZER_ARGS_MAX_BYTES, FINALIZER_TOOL_NAME, finalizerInputSchema, judgeBatch,
  type BatchCall, type BatchView,
} from "../../src/structured/finalizer.ts";

function compile(schemaText: string): CompiledSchema {
  const parsed = parseJsonSafe(schemaText);
  if (!parsed.ok) throw new Error("bad test schema");
  const compiled = compileSchema(parsed.value);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return compiled.validator;
}

const report = compile('{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992},"d":{"type":"number"}},"required":["n"],"additionalProperties":false}');
const nullable = compile('{"type":["object","null"]}');

const call = (args: string, extra: Partial<BatchCall> = {}): BatchCall =>
  ({ toolCallId: extra.toolCallId ?? "c1", toolName: FINALIZER_TOOL_NAME, args, incomplete: false, providerExecuted: false, ...extra });
const batch = (calls: BatchCall[], finish: BatchView["finish"] = "tool-calls"): BatchView => ({ finish, calls });

test("finalizer schema wraps the caller's schema unmodified as output", () => {
  const caller = { type: "object", properties: { a: { type: "string", pattern: "^(?=x)" } } };
  const wrapped = finalizerInputSchema(caller);
  assert.equal(wrapped, { type: "object", properties: { output: caller }, required: ["output"], additionalProperties: false });
});

test("finalizer schema: local references are rebased so they name the same schemas inside the wrapper", () => {
  const caller = {
    $defs: { Node: { type: "object", properties: { v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["v"] } },
    properties: { root: { $ref: "#/$defs/Node" }, self: { $ref: "#" } },
    default: { $ref: "#/not/a/schema" },
    enum: [{ $ref: "#" }, {}, { root: { v: 1 } }, { self: { root: { v: "x" } } }, { root: { v: 1, kids: [{ v: 2 }, { v: "y" }] } }],
  };
  const wrapped = finalizerInputSchema(caller) as { properties: { output: typeof caller } };
  assert.is(wrapped.properties.output.properties.root.$ref, "#/properties/output/$defs/Node");
  assert.is(wrapped.properties.output.properties.self.$ref, "#/properties/output");
  assert.equal(wrapped.properties.output.default, caller.default);
  assert.equal(wrapped.properties.output.enum, caller.enum);
  const inner = compile(JSON.stringify({ ...caller, enum: undefined }));
  const outer = compile(JSON.stringify({ ...wrapped, properties: { output: { ...wrapped.properties.output, enum: undefined } } }));
  for (const v of ['{"root":{"v":1}}', '{"self":{"root":{"v":"x"}}}', '{"root":{"v":1,"kids":[{"v":2},{"v":"y"}]}}', '{"root":{"kids":[]}}']) {
    assert.is(validateValue(outer, `{"output":${v}}`).ok, validateValue(inner, v).ok, v);
  }
});

test("a lone valid call is a candidate with exact numbers", () => {
  const verdict = judgeBatch(batch([call('{"output":{"n":9007199254740992,"d":0.10000000000000000000001}}')]), report);
  assert.is(verdict.kind, "candidate");
  if (verdict.kind !== "candidate") return;
  assert.is(verdict.canonicalText, '{"d": 0.10000000000000000000001, "n": 9007199254740992}');
});

test("null output succeeds where the schema allows it", () => {
  const verdict = judgeBatch(batch([call('{"output":null}')]), nullable);
  assert.is(verdict.kind, "candidate");
  if (verdict.kind === "candidate") assert.is(verdict.canonicalText, "null");
});

test("exceeding an exact maximum is an invalid value with a pointer", () => {
  const verdict = judgeBatch(batch([call('{"output":{"n":9007199254740993}}')]), report);
  assert.is(verdict.kind, "rejected");
  if (verdict.kind !== "rejected") return;
  assert.is(verdict.reason, "invalid_value");
  assert.ok(verdict.valueRejected);
  assert.is(verdict.placeholders.size, 0, "a safe, parseable payload may be stored as is");
  assert.ok(verdict.feedback.includes("/n"));
});

test("text only is a rejection that is not a value failure", () => {
  const verdict = judgeBatch(batch([], "stop"), report);
  assert.is(verdict.kind, "rejected");
  if (verdict.kind === "rejected") {
    assert.is(verdict.reason, "text_only");
    assert.not.ok(verdict.valueRejected);
  }
});

test("ordinary tool steps are not counted", () => {
  const verdict = judgeBatch(batch([call("{}", { toolName: "read_file" })]), report);
  assert.is(verdict.kind, "ordinary");
});

test("content filter refuses at once, even when the finalizer's arguments parse", () => {
  assert.is(judgeBatch(batch([call('{"output":{"n":1}}')], "content-filter"), report).kind, "refused");
});

test("a truncated step whose partial arguments parse produces no candidate", () => {
  for (const finish of ["length", "other"] as const) {
    const verdict = judgeBatch(batch([call('{"output":{"n":1}}')], finish), report);
    assert.is(verdict.kind, "rejected");
    if (verdict.kind === "rejected") {
      assert.is(verdict.reason, "truncated");
      assert.is(verdict.placeholders.get("c1"), '{"chatd_rejected_arguments":"truncated"}');
    }
  }
  const incomplete = judgeBatch(batch([call('{"output":{"n":1}}', { incomplete: true })]), report);
  assert.is(incomplete.kind, "rejected");
});

for (const [name, args, rule] of [
  ["duplicate keys", '{"output":{"n":1,"n":2}}', "duplicate-key"],
  ["huge exponent", '{"output":{"n":1,"d":1e400}}', "number-range"],
  ["trailing data", '{"output":{"n":1}} {"output":{"n":2}}', "trailing-data"],
  ["lone surrogate", '{"output":{"n":1,"s":"\\ud800"}}', "unpaired-surrogate"],
] as const) {
  test(`unsafe arguments (${name}) are replaced by a placeholder and never stored`, () => {
    const verdict = judgeBatch(batch([call(args)]), report);
    assert.is(verdict.kind, "rejected");
    if (verdict.kind !== "rejected") return;
    assert.is(verdict.reason, "invalid_arguments");
    assert.ok(verdict.valueRejected);
    assert.is(verdict.placeholders.get("c1"), JSON.stringify({ chatd_rejected_arguments: rule }));
    assert.is(verdict.screening[0]?.rule, rule);
    assert.not.ok(JSON.stringify(verdict.screening).includes(args), "screening keeps a hash, not the payload");
  });
}

test("oversized arguments are rejected by size before parsing", () => {
  const big = `{"output":{"n":1,"s":"${"x".repeat(FINALIZER_ARGS_MAX_BYTES)}"}}`;
  const verdict = judgeBatch(batch([call(big)]), report);
  assert.is(verdict.kind, "rejected");
  if (verdict.kind === "rejected") {
    assert.is(verdict.screening[0]?.rule, "max-bytes");
    assert.ok(verdict.feedback.length < 2600, "feedback stays bounded");
  }
});

test("arguments must be exactly the wrapper", () => {
  for (const args of ['{"n":1}', '{"output":{"n":1},"extra":1}', "[1]"]) {
    const verdict = judgeBatch(batch([call(args)]), report);
    assert.is(verdict.kind, "rejected", args);
    if (verdict.kind === "rejected") assert.is(verdict.reason, "invalid_arguments");
  }
});

test("the finalizer beside another call is an invalid batch: siblings skipped, provider siblings not answered", () => {
  const verdict = judgeBatch(batch([
    call('{"output":{"n":1}}'),
    call("{}", { toolCallId: "c2", toolName: "read_file" }),
    call("{}", { toolCallId: "c3", toolName: "web_search", providerExecuted: true }),
  ]), report);
  assert.is(verdict.kind, "rejected");
  if (verdict.kind !== "rejected") return;
  assert.is(verdict.reason, "invalid_batch");
  assert.equal(verdict.results.map((r) => r.toolCallId), ["c1", "c2"]);
  assert.ok(verdict.results[1]!.result.error.startsWith("skipped"));
});

test("two finalizer calls are rejected", () => {
  const verdict = judgeBatch(batch([call('{"output":{"n":1}}'), call('{"output":{"n":2}}', { toolCallId: "c2" })]), report);
  assert.is(verdict.kind, "rejected");
  if (verdict.kind === "rejected") assert.is(verdict.reason, "duplicate_finalizer");
});

test("budget: the first attempt plus two repairs; the code depends on value failures", () => {
  assert.not.ok(budgetExhausted(1, 2));
  assert.not.ok(budgetExhausted(2, 2));
  assert.ok(budgetExhausted(3, 2));
  assert.is(exhaustionCode(true), "validation_exhausted");
  assert.is(exhaustionCode(false), "not_produced");
});

test.run();
