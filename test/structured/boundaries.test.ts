// Every cap of the limits table at N and N + 1, through the three ways a value or schema reaches the
// validator: the finalizer (a model's `{"output": V}` call), `chatd schema validate` (one value per
// line) and `chatd schema validate --jsonl` ({schema, value} lines). They must agree on the verdict
// and on the message, and a value that passes must fit its caps as stored (`valueJson`'s text).
import { PassThrough, Readable } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { newJsonlMemo, runSchemaCheck, runSchemaValidate, validateJsonlLine } from "../../src/cli/schema-command.ts";
import { FINALIZER_TOOL_NAME, judgeBatch } from "../../src/structured/finalizer.ts";
import {
  NUMBER_MAX_LITERAL_LENGTH, SCHEMA_MAX_BRANCHES, SCHEMA_MAX_BYTES, SCHEMA_MAX_DEPTH, SCHEMA_MAX_ENUM_ITEMS, SCHEMA_MAX_JSON_DEPTH,
  SCHEMA_MAX_NODES, SCHEMA_MAX_PATTERN_LENGTH, SCHEMA_MAX_PATTERNS, validateResponseFormat, VALUE_INPUT_MAX_BYTES, VALUE_MAX_BYTES,
  VALUE_MAX_DEPTH, VALUE_MAX_NODES,
} from "../../src/structured/index.ts";
import { governingRequest } from "../../worker/loop/structured.ts";
import { compile } from "./helpers.ts";

type Verdict = { ok: true; stored?: string } | { ok: false; message: string };

const ANY = "{}";

function viaFinalizer(schemaText: string, valueText: string): Verdict {
  const verdict = judgeBatch({ finish: "tool-calls", calls: [{ toolCallId: "c", toolName: FINALIZER_TOOL_NAME,
    args: `{"output":${valueText}}`, incomplete: false, providerExecuted: false }] }, compile(schemaText));
  if (verdict.kind === "candidate") return { ok: true, stored: verdict.canonicalText };
  if (verdict.kind !== "rejected") throw new Error(verdict.kind);
  const error = verdict.results[0]?.result.errors?.[0];
  return { ok: false, message: `${error?.pointer ?? "?"} ${error?.message ?? verdict.feedback}` };
}

async function viaCli(schemaText: string, valueText: string): Promise<Verdict> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (c: Buffer) => chunks.push(c));
  await runSchemaValidate(schemaText, Readable.from([`${valueText}\n`]), out, new PassThrough());
  const line = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { ok: boolean; errors?: { pointer: string; message: string }[] };
  return line.ok ? { ok: true } : { ok: false, message: `${line.errors?.[0]?.pointer ?? "?"} ${line.errors?.[0]?.message ?? ""}` };
}

function viaJsonl(schemaText: string, valueText: string): Verdict {
  const line = `{"schema":${schemaText},"value":${valueText}}`;
  const r = validateJsonlLine(line);
  // A run that has seen the schema on an earlier line parses only this line's value: same verdict.
  const memo = newJsonlMemo();
  validateJsonlLine(`{"schema":${schemaText},"value":null}`, memo);
  assert.equal(validateJsonlLine(line, memo), r, "--jsonl with the schema remembered");
  if (r.ok) return { ok: true };
  const e = "errors" in r ? r.errors[0] : undefined;
  return { ok: false, message: `${e?.pointer ?? "?"} ${e?.message ?? ""}` };
}

/** The three agree; returns the finalizer's verdict. */
async function judge(valueText: string, schemaText = ANY): Promise<Verdict> {
  const fin = viaFinalizer(schemaText, valueText);
  const cli = await viaCli(schemaText, valueText);
  const jsonl = viaJsonl(schemaText, valueText);
  const plain = (v: Verdict): Verdict => (v.ok ? { ok: true } : v);
  assert.equal(plain(cli), plain(fin), "chatd schema validate agrees with the finalizer");
  assert.equal(plain(jsonl), plain(fin), "chatd schema validate --jsonl agrees with the finalizer");
  return fin;
}

async function passes(valueText: string, schemaText = ANY): Promise<string> {
  const v = await judge(valueText, schemaText);
  assert.ok(v.ok, v.ok ? "" : v.message);
  return v.ok ? v.stored ?? "" : "";
}

async function fails(valueText: string, message: RegExp, schemaText = ANY): Promise<void> {
  const v = await judge(valueText, schemaText);
  assert.not.ok(v.ok, "expected a refusal");
  if (!v.ok) assert.match(v.message, message);
}

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

test("value bytes, as stored: a string at the cap passes, one byte more fails", async () => {
  const str = (n: number): string => `"${"é".repeat((n - 2) / 2)}${(n - 2) % 2 === 1 ? "a" : ""}"`;
  assert.is(bytes(await passes(str(VALUE_MAX_BYTES))), VALUE_MAX_BYTES);
  await fails(str(VALUE_MAX_BYTES + 1), /max-bytes/);
});

test("value bytes, as stored: numbers written out count as stored (1e60 is 61 bytes there)", async () => {
  // [1e60, 1e60, ...]: 61 digits + ", " per item; 4,161 items are 262,143 bytes stored, 16 KiB sent.
  const items = (long: number): string => `[${[...Array<string>(long).fill("1e61"), ...Array<string>(4161 - long).fill("1e60")].join(",")}]`;
  assert.ok(bytes(items(1)) < 25_000, "what is sent is small");
  assert.is(bytes(await passes(items(1))), VALUE_MAX_BYTES);
  await fails(items(2), /^ max-bytes: the value is 262145 bytes as stored, more than 262144; numbers are stored without exponent/);
  // The case: 5,000 x 1e60, 25 KB sent, 315,000 bytes stored.
  await fails(`[${Array<string>(5000).fill("1e60").join(",")}]`, /315000 bytes as stored/);
});

test("value bytes, as stored: separators count (a space after every comma and colon)", async () => {
  // ["a...", "b..."] is stored as 2 + (L1 + 2) + 2 + (L2 + 2) bytes and sent as one byte less.
  const pair = (l1: number, l2: number): string => `["${"a".repeat(l1)}","${"b".repeat(l2)}"]`;
  const half = (VALUE_MAX_BYTES - 8) / 2;
  assert.is(bytes(await passes(pair(half, half))), VALUE_MAX_BYTES);
  assert.is(bytes(pair(half, half + 1)), VALUE_MAX_BYTES, "sent: exactly the cap");
  await fails(pair(half, half + 1), /^ max-bytes: the value is 262145 bytes as stored.*space after every comma/);
  const object = (l: number): string => `{"k":"${"v".repeat(l)}"}`;
  // {"k": "v..."}: 2 + 3 + 2 + (l + 2)
  assert.is(bytes(await passes(object(VALUE_MAX_BYTES - 9))), VALUE_MAX_BYTES);
  await fails(object(VALUE_MAX_BYTES - 8), /max-bytes/);
});

test("what is sent is a transport bound (256 KiB + 64, wrapper included): whitespace and escapes up to it", async () => {
  assert.is(VALUE_INPUT_MAX_BYTES, VALUE_MAX_BYTES + 64);
  // Whitespace on a value stored at the cap: sent VALUE_MAX_BYTES + 40 (+ 11 for the wrapper).
  const half = (VALUE_MAX_BYTES - 8) / 2;
  const spaced = `[ "${"a".repeat(half)}" ,${" ".repeat(39)}"${"b".repeat(half)}"]`;
  assert.is(bytes(spaced), VALUE_MAX_BYTES + 40);
  assert.is(bytes(await passes(spaced)), VALUE_MAX_BYTES);
  assert.is(bytes(await passes(`"${"\\u00e9".repeat(43_000)}"`)), 2 * 43_000 + 2);
  assert.not.ok(viaFinalizer(ANY, `[${" ".repeat(VALUE_INPUT_MAX_BYTES)}1]`).ok);
  assert.not.ok((await viaCli(ANY, `[${" ".repeat(VALUE_INPUT_MAX_BYTES)}1]`)).ok);
});

test("value depth: 64 passes, 65 fails with the value's cap in the message", async () => {
  const deep = (d: number): string => "[".repeat(d) + "]".repeat(d);
  await passes(deep(VALUE_MAX_DEPTH));
  await fails(deep(VALUE_MAX_DEPTH + 1), /^\/0(\/0)* max-depth: nesting deeper than 64$/);
});

test("value nodes: 16,384 pass, 16,385 fail (the wrapper is one node, not two)", async () => {
  const nodes = (n: number): string => `[${Array<string>(n - 1).fill("1").join(",")}]`;
  await passes(nodes(VALUE_MAX_NODES));
  await fails(nodes(VALUE_MAX_NODES + 1), /max-nodes: more than 16384 nodes$/);
  const inObject = (n: number): string => `{${Array.from({ length: n - 1 }, (_, i) => `"k${i}":null`).join(",")}}`;
  await passes(inObject(VALUE_MAX_NODES));
  await fails(inObject(VALUE_MAX_NODES + 1), /max-nodes/);
});

test("number literals: 64 characters pass, 65 fail; also written out (1e63 passes, 1e64 fails)", async () => {
  const digits = (n: number): string => `1${"0".repeat(n - 1)}`;
  assert.is(await passes(digits(NUMBER_MAX_LITERAL_LENGTH)), digits(NUMBER_MAX_LITERAL_LENGTH));
  await fails(digits(NUMBER_MAX_LITERAL_LENGTH + 1), /number-too-long/);
  const fraction = (n: number): string => `0.${"1".repeat(n - 2)}`;
  await passes(fraction(NUMBER_MAX_LITERAL_LENGTH));
  await fails(fraction(NUMBER_MAX_LITERAL_LENGTH + 1), /number-too-long/);
  assert.is((await passes("1e63")).length, NUMBER_MAX_LITERAL_LENGTH);
  await fails("1e64", /number-too-long: number longer than 64 characters when written without exponent/);
  assert.is((await passes("1e-62")).length, NUMBER_MAX_LITERAL_LENGTH);
  await fails("1e-63", /number-too-long/);
  assert.is((await passes("-1e-61")).length, NUMBER_MAX_LITERAL_LENGTH);
  await fails("-1e-62", /number-too-long/);
});

/** Schema caps: the API's admission (validateResponseFormat), `chatd schema check` and --jsonl agree. */
function schemaVerdicts(schemaText: string): boolean[] {
  const api = validateResponseFormat(`{"type":"json_schema","json_schema":{"name":"r","schema":${schemaText}}}`).ok;
  const check = runSchemaCheck(schemaText, new PassThrough(), new PassThrough()) === 0;
  const r = validateJsonlLine(`{"schema":${schemaText},"value":null}`);
  const jsonl = r.ok || !("schema_errors" in r);
  return [api, check, jsonl];
}
function schemaPasses(schemaText: string): void {
  assert.equal(schemaVerdicts(schemaText), [true, true, true], schemaText.slice(0, 60));
}
function schemaFails(schemaText: string): void {
  assert.equal(schemaVerdicts(schemaText), [false, false, false], schemaText.slice(0, 60));
}

test("schema caps at N and N + 1: bytes, depth, nodes, branches, patterns, pattern length, enum items", () => {
  const described = (n: number): string => `{"description":"${"x".repeat(n - '{"description": ""}'.length)}"}`;
  schemaPasses(described(SCHEMA_MAX_BYTES));
  schemaFails(described(SCHEMA_MAX_BYTES + 1));
  const nested = (d: number): string => '{"not":'.repeat(d - 1) + "{}" + "}".repeat(d - 1);
  schemaPasses(nested(SCHEMA_MAX_DEPTH));
  schemaFails(nested(SCHEMA_MAX_DEPTH + 1));
  // {"examples": [n - 2 items]} is n nodes (the object, the array, the items).
  const enumNodes = (n: number): string => `{"examples":[${Array<string>(n - 2).fill("0").join(",")}]}`;
  schemaPasses(enumNodes(SCHEMA_MAX_NODES));
  schemaFails(enumNodes(SCHEMA_MAX_NODES + 1));
  const anyOf = (n: number): string => `{"anyOf":[${Array<string>(n).fill("{}").join(",")}]}`;
  schemaPasses(anyOf(SCHEMA_MAX_BRANCHES));
  schemaFails(anyOf(SCHEMA_MAX_BRANCHES + 1));
  const patterns = (n: number): string => `{"patternProperties":{${Array.from({ length: n }, (_, i) => `"^p${i}$":{}`).join(",")}}}`;
  schemaPasses(patterns(SCHEMA_MAX_PATTERNS));
  schemaFails(patterns(SCHEMA_MAX_PATTERNS + 1));
  schemaPasses(`{"pattern":"${"a".repeat(SCHEMA_MAX_PATTERN_LENGTH)}"}`);
  schemaFails(`{"pattern":"${"a".repeat(SCHEMA_MAX_PATTERN_LENGTH + 1)}"}`);
  const enumItems = (n: number): string => `{"enum":[${Array.from({ length: n }, (_, i) => i).join(",")}]}`;
  schemaPasses(enumItems(SCHEMA_MAX_ENUM_ITEMS));
  schemaFails(enumItems(SCHEMA_MAX_ENUM_ITEMS + 1));
});

test("the worker re-validates a stored schema with the schema caps: JSON nesting 128 runs; 129 is refused by every path", () => {
  const deep = (d: number): string => `{"enum":[${"[".repeat(d - 2)}${"]".repeat(d - 2)}]}`;
  const state = (schemaText: string) => ({ requestId: "r", schemaText, rejectedBatches: 0, valueRejected: false, candidatePresent: false });
  schemaPasses(deep(SCHEMA_MAX_JSON_DEPTH));
  schemaFails(deep(SCHEMA_MAX_JSON_DEPTH + 1));
  assert.ok(governingRequest(state(deep(SCHEMA_MAX_JSON_DEPTH)), [], { enabled: false, perTool: true }).ok);
});

test.run();
