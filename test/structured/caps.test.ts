import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  canonicalJson,
  SCHEMA_MAX_BRANCHES,
  SCHEMA_MAX_BYTES,
  SCHEMA_MAX_DEPTH,
  SCHEMA_MAX_ENUM_ITEMS,
  SCHEMA_MAX_JSON_DEPTH,
  SCHEMA_MAX_PATTERN_LENGTH,
  SCHEMA_MAX_PATTERNS,
  validateResponseFormat,
  validateValue,
  VALUE_MAX_BYTES,
  VALUE_MAX_DEPTH,
  VALUE_MAX_NODES,
} from "../../src/structured/index.ts";
import { compile, parse, schemaErrors } from "./helpers.ts";

function passes(schemaText: string): void {
  assert.equal(schemaErrors(schemaText), [], schemaText.slice(0, 80));
}
function fails(schemaText: string, detail: RegExp): void {
  const errs = schemaErrors(schemaText);
  assert.ok(errs.length > 0, `expected rejection: ${schemaText.slice(0, 80)}`);
  assert.match(errs[0]?.detail ?? "", detail);
}

test("schema bytes (canonical text): cap passes, cap + 1 fails", () => {
  const body = (n: number): string => `{"description":"${"x".repeat(n)}"}`;
  const n = SCHEMA_MAX_BYTES - '{"description": ""}'.length;
  assert.is(Buffer.byteLength(canonicalJson(parse(body(n)))), SCHEMA_MAX_BYTES);
  passes(body(n));
  fails(body(n + 1), /larger than/);
});

test("schema bytes are also capped in the envelope", () => {
  const env = (n: number): string => `{"type":"json_schema","json_schema":{"name":"r","schema":{"description":"${"x".repeat(n)}"}}}`;
  const n = SCHEMA_MAX_BYTES - '{"description": ""}'.length;
  assert.ok(validateResponseFormat(env(n)).ok);
  const r = validateResponseFormat(env(n + 1));
  assert.not.ok(r.ok);
  if (!r.ok) assert.is(r.errors[0]?.field, "response_format.json_schema.schema");
});

test("schema depth: cap passes, cap + 1 fails", () => {
  const nested = (depth: number): string => '{"not":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
  passes(nested(SCHEMA_MAX_DEPTH));
  fails(nested(SCHEMA_MAX_DEPTH + 1), /deeper than/);
  const viaProps = (depth: number): string => '{"properties":{"a":'.repeat(depth - 1) + "{}" + "}}".repeat(depth - 1);
  passes(viaProps(SCHEMA_MAX_DEPTH));
  fails(viaProps(SCHEMA_MAX_DEPTH + 1), /deeper than/);
});

test("schema JSON nesting: cap passes, cap + 1 fails", () => {
  const enumDepth = (d: number): string => `{"enum":[${"[".repeat(d - 2)}${"]".repeat(d - 2)}]}`;
  passes(enumDepth(SCHEMA_MAX_JSON_DEPTH));
  assert.throws(() => parse(enumDepth(SCHEMA_MAX_JSON_DEPTH + 1)), /max-depth/);
});

test("combinator branches: cap passes, cap + 1 fails, counted across keywords", () => {
  const anyOf = (n: number): string => `{"anyOf":[${Array(n).fill("{}").join(",")}]}`;
  passes(anyOf(SCHEMA_MAX_BRANCHES));
  fails(anyOf(SCHEMA_MAX_BRANCHES + 1), /combinator branches/);
  const mixed = (n: number): string => {
    const deps = Array.from({ length: n - 3 - 2 }, (_, i) => `"d${i}":{}`).join(",");
    return `{"if":{},"then":{},"else":{},"allOf":[{},{"dependencies":{${deps}}}]}`;
  };
  passes(mixed(SCHEMA_MAX_BRANCHES));
  fails(mixed(SCHEMA_MAX_BRANCHES + 1), /combinator branches/);
  // Array-form dependencies are not branches.
  passes(`{"dependencies":{${Array.from({ length: 100 }, (_, i) => `"d${i}":["x"]`).join(",")}}}`);
});

test("pattern count: cap passes, cap + 1 fails (pattern + patternProperties)", () => {
  const pats = (n: number): string => {
    const props = Array.from({ length: n - 1 }, (_, i) => `"^p${i}$":{}`).join(",");
    return `{"pattern":"^x","patternProperties":{${props}}}`;
  };
  passes(pats(SCHEMA_MAX_PATTERNS));
  fails(pats(SCHEMA_MAX_PATTERNS + 1), /more than 32 patterns/);
});

test("pattern length: cap passes, cap + 1 fails", () => {
  passes(`{"pattern":"${"a".repeat(SCHEMA_MAX_PATTERN_LENGTH)}"}`);
  fails(`{"pattern":"${"a".repeat(SCHEMA_MAX_PATTERN_LENGTH + 1)}"}`, /longer than/);
  fails(`{"patternProperties":{"${"a".repeat(SCHEMA_MAX_PATTERN_LENGTH + 1)}":{}}}`, /longer than/);
});

test("enum size: cap passes, cap + 1 fails", () => {
  const en = (n: number): string => `{"enum":[${Array.from({ length: n }, (_, i) => i).join(",")}]}`;
  passes(en(SCHEMA_MAX_ENUM_ITEMS));
  fails(en(SCHEMA_MAX_ENUM_ITEMS + 1), /enum items/);
});

test("value caps apply before validation: bytes, depth, nodes", () => {
  const any = compile("{}");
  const str = (n: number): string => `"${"a".repeat(n - 2)}"`;
  assert.ok(validateValue(any, str(VALUE_MAX_BYTES)).ok);
  const big = validateValue(any, str(VALUE_MAX_BYTES + 1));
  assert.not.ok(big.ok);
  if (!big.ok) assert.match(big.errors[0]?.message ?? "", /max-bytes/);
  const deep = (d: number): string => "[".repeat(d) + "]".repeat(d);
  assert.ok(validateValue(any, deep(VALUE_MAX_DEPTH)).ok);
  assert.not.ok(validateValue(any, deep(VALUE_MAX_DEPTH + 1)).ok);
  const nodes = (n: number): string => `[${Array(n - 1).fill("1").join(",")}]`;
  assert.ok(validateValue(any, nodes(VALUE_MAX_NODES)).ok);
  assert.not.ok(validateValue(any, nodes(VALUE_MAX_NODES + 1)).ok);
});

test.run();
