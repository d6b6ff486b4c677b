import { PassThrough, Readable } from "node:stream";
import { Command } from "commander";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { VALUE_MAX_BYTES } from "../../src/structured/index.ts";
import { newJsonlMemo, registerSchemaCommand, runSchemaCheck, runSchemaValidate, runSchemaValidateJsonl, validateJsonlLine } from "../../src/cli/schema-command.ts";

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

test("check: a bare schema passes with a summary line and its size beside each cap", () => {
  const out = sink();
  const err = sink();
  assert.is(runSchemaCheck('{"type":"object","properties":{"a":{"type":"integer"}}}', out.stream, err.stream), 0);
  const lines = out.text().split("\n");
  assert.match(lines[0] ?? "", /^ok: JSON Schema document, \d+ bytes canonical, sha256 [0-9a-f]{64}$/);
  assert.equal(lines.slice(1).map((l) => l.trim().split(/\s+/)[0]), ["bytes", "nodes", "branches", "patterns", "depth", ""]);
  assert.is(err.text(), "");
});

test("check: sizes through $ref are shown beside the written ones and the cap", () => {
  const out = sink();
  const schema = `{"$defs":{"B":{"anyOf":[{},{},{},{},{},{},{"pattern":"^a"}]}},"allOf":[${Array(8).fill('{"$ref":"#/$defs/B"}').join(",")}]}`;
  assert.is(runSchemaCheck(schema, out.stream, sink().stream), 0);
  const text = out.text();
  assert.match(text, /\n {2}branches +15 written, +64 through \$ref +\(cap 64\)\n/);
  assert.match(text, /\n {2}patterns +1 written, +8 through \$ref +\(cap 32\)\n/);
  assert.match(text, /\n {2}depth +3 written, +4 through \$ref +\(cap 32\)\n/);
  assert.match(text, /\n {2}nodes +\d+ written, +\d+ through \$ref, \d+ per value node +\(cap 16384\)\n/);
});

test("check: an envelope is accepted and named in the summary", () => {
  const out = sink();
  assert.is(runSchemaCheck('{"type":"json_schema","json_schema":{"name":"report","schema":{"type":"object"}}}', out.stream, sink().stream), 0);
  assert.match(out.text(), /^ok: response_format envelope "report"/);
});

test("check: errors name the field and exit 1", () => {
  const err = sink();
  assert.is(runSchemaCheck('{"properties":{"a":{"$ref":"other.json#"}}}', sink().stream, err.stream), 1);
  assert.match(err.text(), /^\/properties\/a\/\$ref: only local references are supported/);
  const err2 = sink();
  assert.is(runSchemaCheck('{"type":"json_schema","json_schema":{"name":"bad name","schema":{}}}', sink().stream, err2.stream), 1);
  assert.match(err2.text(), /^response_format\.json_schema\.name: /);
  const err3 = sink();
  assert.is(runSchemaCheck('{"a":1,"a":2}', sink().stream, err3.stream), 1);
  assert.match(err3.text(), /duplicate-key/);
});

test("validate: one verdict per input line", async () => {
  const out = sink();
  const values = Readable.from(["1\n", '"x"\n', "\n", "2.5\n", '{"a":1,"a":2}\n']);
  const code = await runSchemaValidate('{"type":"integer"}', values, out.stream, sink().stream);
  assert.is(code, 1);
  const verdicts = out.text().trim().split("\n").map((l) => JSON.parse(l) as { line: number; ok: boolean });
  assert.equal(verdicts.map((v) => [v.line, v.ok]), [[1, true], [2, false], [4, false], [5, false]]);
});

test("validate: all valid exits 0; a bad schema exits 2", async () => {
  assert.is(await runSchemaValidate('{"type":"integer"}', Readable.from(["1\n2\n"]), sink().stream, sink().stream), 0);
  const err = sink();
  assert.is(await runSchemaValidate('{"format":"regex"}', Readable.from(["1\n"]), sink().stream, err.stream), 2);
  assert.match(err.text(), /\/format/);
});

test("validate --jsonl: ok, schema_errors and errors lines", async () => {
  const out = sink();
  const input = Readable.from([
    '{"schema":{"type":"integer"},"value":3}\n',
    '{"schema":{"$ref":"#"},"value":3}\n',
    '{"schema":{"type":"object"},"value":{"a":1,"a":2}}\n',
    '{"schema":{"maximum":9007199254740992},"value":9007199254740993}\n',
    "not json\n",
  ]);
  assert.is(await runSchemaValidateJsonl(input, out.stream), 1);
  const rows = out.text().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(rows[0], { line: 1, ok: true });
  assert.equal(Object.keys(rows[1] ?? {}), ["line", "ok", "schema_errors"]);
  assert.equal(rows[2], { line: 3, ok: false, errors: [{ pointer: "/a", message: "duplicate-key: duplicate object key" }] });
  assert.equal(rows[3], { line: 4, ok: false, errors: [{ pointer: "", message: "must be <= 9007199254740992" }] });
  assert.equal(Object.keys(rows[4] ?? {}), ["line", "ok", "errors"]);
});

test("validate --jsonl: value caps apply to the value", () => {
  const deep = "[".repeat(65) + "]".repeat(65);
  const r = validateJsonlLine(`{"schema":{},"value":${deep}}`);
  assert.ok(!r.ok && "errors" in r && /max-depth/.test(r.errors[0]?.message ?? ""));
  assert.equal(validateJsonlLine(`{"schema":{},"value":${"[".repeat(64) + "]".repeat(64)}}`), { ok: true });
});

test("validate --jsonl: a repeated schema's lines get the full path's verdicts from their value alone", () => {
  // A property named "value" puts `,"value":` inside the schema text too.
  const schema = '{"type":"object","properties":{"name":{"type":"string"},"value":{"type":"integer","maximum":10}},"required":["value"]}';
  const values = [
    '{"value":3}', '{"value":11}', '{"name":1,"value":1}', '{"value":9007199254740993}', '{"value":1,"value":2}', "{\"value\":1", '{"value":1}}',
    '{"value":1},"x":{}', " {\"value\": 2} ", "[]", "null", "[".repeat(64) + "]".repeat(64), "[".repeat(65) + "]".repeat(65),
    `[${Array.from({ length: 16_383 }, () => "1").join(",")}]`, `[${Array.from({ length: 16_384 }, () => "1").join(",")}]`,
    `["${"x".repeat(VALUE_MAX_BYTES - 4)}"]`, `["${"x".repeat(VALUE_MAX_BYTES - 3)}"]`, '"\\ud800"', "1e400",
  ];
  const memo = newJsonlMemo();
  const lines = values.flatMap((v) => [`{"schema":${schema},"value":${v}}`, `{"schema":${schema},"value":${v}} \r`]);
  lines.splice(4, 0, '{"schema":{"type":"string"},"value":"other schema between"}');
  for (const line of lines) assert.equal(validateJsonlLine(line, memo), validateJsonlLine(line), line.slice(0, 120));
  // Every line of the first schema after the first one, except those the full path must judge
  // (a problem in the value, an over-long line, the line after the other schema: it re-remembers).
  assert.ok(memo.hits >= 20, `only ${memo.hits} lines recognised`);
  assert.is(memo.opening, `{"schema":${schema},"value":`);
  // Lines are parsed from their UTF-8 bytes when that is lossless: a raw lone surrogate is not
  // replaced by U+FFFD on the way, it is refused.
  for (const m of [memo, undefined]) {
    assert.equal(validateJsonlLine(`{"schema":${schema},"value":{"name":"a\uD800b","value":1}}`, m),
      { ok: false, errors: [{ pointer: "/name", message: "invalid-utf8: lone surrogate in input text" }] });
  }
});

test("validate --jsonl: a schema whose end cannot be told apart in a few tries is not remembered", () => {
  // `,"value":` nine times inside the schema, before the one after it.
  const schema = JSON.stringify({ properties: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, { properties: { a: {}, value: {} } }])) });
  const memo = newJsonlMemo();
  const line = `{"schema":${schema},"value":{}}`;
  assert.equal(validateJsonlLine(line, memo), { ok: true });
  assert.equal(validateJsonlLine(line, memo), { ok: true });
  assert.is(memo.opening, undefined);
  assert.is(memo.hits, 0);
});

test("registerSchemaCommand adds schema check and schema validate", () => {
  const program = new Command("chatd");
  registerSchemaCommand(program);
  const schema = program.commands.find((c) => c.name() === "schema");
  assert.ok(schema);
  assert.equal(schema?.commands.map((c) => c.name()).sort(), ["check", "validate"]);
  const validate = schema?.commands.find((c) => c.name() === "validate");
  assert.ok(validate?.options.some((o) => o.long === "--jsonl"));
});

test.run();
