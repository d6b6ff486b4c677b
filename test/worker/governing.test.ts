// The governing request's validator and finalizer tool (worker/loop/structured.ts governingRequest), for a stored
// schema text seen before: the same validator and tool without a second compile, the per-call refusals still
// applied, a text whose validator the compile cache evicted compiled again, and a tool shared between steps that
// nothing can change under them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { clearCompileCache } from "../../src/structured/compile.ts";
import { FINALIZER_TOOL_NAME } from "../../src/structured/finalizer.ts";
import { governingRequest } from "../../worker/loop/structured.ts";
import type { StructuredState } from "../../worker/loop/types.ts";

const state = (schemaText: string): StructuredState =>
  ({ requestId: "r", schemaText, rejectedBatches: 0, valueRejected: false, candidatePresent: false });
const loose = { enabled: false, perTool: true };
const SCHEMA = '{"type": "object", "required": ["city"], "properties": {"city": {"$ref": "#/definitions/name"}}, "definitions": {"name": {"type": "string"}}}';

test("a schema text seen before: the same validator and finalizer tool, frozen", () => {
  const first = governingRequest(state(SCHEMA), [], loose);
  const again = governingRequest(state(SCHEMA), ["list_files"], loose);
  assert.ok(first.ok && again.ok);
  assert.is(again.validator, first.validator);
  assert.is(again.tool, first.tool);
  assert.equal(first.tool, { name: FINALIZER_TOOL_NAME, description: first.tool.description, strict: false, inputSchema: {
    type: "object", required: ["output"], additionalProperties: false,
    properties: { output: { type: "object", required: ["city"], properties: { city: { $ref: "#/properties/output/definitions/name" } },
      definitions: { name: { type: "string" } } } } } });
  const schema = first.tool.inputSchema as { properties: { output: { required: string[] } } };
  assert.ok(Object.isFrozen(first.tool) && Object.isFrozen(schema.properties.output.required), "shared between steps, so frozen");
  assert.throws(() => schema.properties.output.required.push("country"));
});

test("the refusals that depend on the call apply to a schema seen before", () => {
  assert.ok(governingRequest(state(SCHEMA), [], loose).ok);
  const named = governingRequest(state(SCHEMA), [FINALIZER_TOOL_NAME], loose);
  assert.ok(!named.ok && named.outcome.code === "configuration_error" && /reserved for the finalizer/.test(named.outcome.message ?? ""));
  const strict = governingRequest(state(SCHEMA), [], { enabled: true, perTool: false });
  assert.ok(!strict.ok && /strict tools/.test(strict.outcome.message ?? ""));
});

test("a text whose validator the compile cache evicted is compiled again; a bad text is refused every time", () => {
  const first = governingRequest(state(SCHEMA), [], loose);
  clearCompileCache();
  const again = governingRequest(state(SCHEMA), [], loose);
  assert.ok(first.ok && again.ok);
  assert.is.not(again.validator, first.validator, "a new compile");
  assert.is(again.validator.sha256, first.validator.sha256);
  for (let i = 0; i < 2; i += 1) {
    const bad = governingRequest(state('{"type": "object", "minProperties": "two"}'), [], loose);
    assert.ok(!bad.ok && /no longer passes validation/.test(bad.outcome.message ?? ""));
  }
});

test.run();
