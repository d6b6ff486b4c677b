import { test } from "uvu";
import * as assert from "uvu/assert";
import { ajvSchemaCount, clearCompileCache } from "../../src/structured/compile.ts";
import { COMPILE_CACHE_SIZE, compileCacheStats, compileSchema, FEEDBACK_MAX_BYTES, FEEDBACK_MAX_ERRORS, formatFeedback, VALUE_MAX_BYTES, validateValue } from "../../src/structured/index.ts";
import { compile, parse } from "./helpers.ts";

test("the same schema (any key order or number spelling) is compiled once", () => {
  const a = compile('{"type":"object","maximum":100}');
  const b = compile('{"maximum":1e2,"type":"object"}');
  assert.is(a, b);
  assert.is(a.schemaText, '{"type": "object", "maximum": 100}');
});

test("the cache stays bounded and evicted entries are removed from their ajv instance", () => {
  clearCompileCache();
  const first = compile('{"const":-1}');
  assert.is(ajvSchemaCount(first), 1);
  const before = compileCacheStats().evictions;
  for (let i = 0; i < COMPILE_CACHE_SIZE + 20; i++) compile(`{"const":${i}}`);
  const stats = compileCacheStats();
  assert.is(stats.size, COMPILE_CACHE_SIZE);
  assert.is(stats.evictions - before, 21);
  assert.is(ajvSchemaCount(first), 0);
  // A validator handed out before eviction keeps working.
  assert.ok(validateValue(first, "-1").ok);
  assert.not.ok(validateValue(first, "1").ok);
  // Recompiling gives a fresh entry.
  const again = compile('{"const":-1}');
  assert.is.not(again, first);
  assert.is(ajvSchemaCount(again), 1);
});

test("distinct patterns in one schema are not de-duplicated into one regex", () => {
  const s = compile('{"properties":{"a":{"pattern":"^a+$"},"b":{"pattern":"^b+$"},"c":{"pattern":"^\\\\u0062$"}},"patternProperties":{"^x":{"type":"string"},"^y":{"type":"number"}}}');
  assert.ok(validateValue(s, '{"a":"aa","b":"bb","c":"b","x1":"s","y1":1}').ok);
  assert.not.ok(validateValue(s, '{"b":"aa"}').ok);
  assert.not.ok(validateValue(s, '{"a":"bb"}').ok);
  assert.not.ok(validateValue(s, '{"y1":"s"}').ok);
  assert.not.ok(validateValue(s, '{"x1":1}').ok);
});

test("patterns are unanchored searches with RE2 Unicode semantics", () => {
  const s = compile('{"properties":{"p":{"pattern":"b"},"one":{"pattern":"^.$"},"len":{"maxLength":1,"minLength":1}}}');
  assert.ok(validateValue(s, '{"p":"abc"}').ok);
  assert.ok(validateValue(s, '{"one":"\u{1F600}"}').ok);
  assert.ok(validateValue(s, '{"len":"\u{1F600}"}').ok);
  assert.not.ok(validateValue(s, '{"len":"ab"}').ok);
});

test("classic ReDoS patterns finish on adversarial input at the value cap", () => {
  const n = VALUE_MAX_BYTES - 16;
  for (const [pattern, input] of [
    ["^(a+)+$", "a".repeat(n) + "!"],
    ["^(a|a)*$", "a".repeat(n) + "!"],
    ["^(a|aa)+$", "a".repeat(n) + "!"],
    ["^(.*a){20}$", "a".repeat(n) + "!"],
    ["^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$", "a".repeat(n) + "!"],
    ["(x+x+)+y", "x".repeat(n)],
  ] as const) {
    const s = compile(`{"pattern":${JSON.stringify(pattern)}}`);
    const r = validateValue(s, JSON.stringify(input));
    assert.not.ok(r.ok, pattern);
  }
});

test("formats accept and reject the usual examples", () => {
  const cases: [string, string, boolean][] = [
    ["date", "2024-02-29", true], ["date", "2023-02-29", false], ["date", "2024-13-01", false],
    ["time", "23:59:60Z", true], ["time", "12:00:00.5+05:30", true], ["time", "12:00:00", false], ["time", "24:00:00Z", false],
    ["date-time", "2024-01-01T00:00:00Z", true], ["date-time", "2024-01-01t00:00:00z", true], ["date-time", "2024-01-01", false],
    ["email", "a.b+c@example.co", true], ["email", "a@b", false], ["email", "@b.co", false], ["email", "\u017f@example.com", false],
    ["hostname", "example.com", true], ["hostname", "-bad.com", false], ["hostname", `${"a".repeat(63)}.com`, true], ["hostname", `${"a".repeat(64)}.com`, false],
    ["hostname", Array(64).fill("abc").join("."), false],
    ["ipv4", "192.168.0.1", true], ["ipv4", "256.0.0.1", false], ["ipv4", "1.2.3", false],
    ["ipv6", "::1", true], ["ipv6", "2001:db8::8a2e:370:7334", true], ["ipv6", "1:2:3", false],
    ["uri", "https://example.com/a?b#c", true], ["uri", "urn:isbn:0451450523", true], ["uri", "/relative", false], ["uri", "http://exa mple.com", false],
    ["uri-reference", "/relative#x", true], ["uri-reference", "\\\\bad", false],
    ["uri-template", "/users/{id}{?q,lang}", true], ["uri-template", "/users/{id", false],
    ["json-pointer", "/a/b~0~1", true], ["json-pointer", "a", false], ["json-pointer", "/~2", false],
    ["relative-json-pointer", "0#", true], ["relative-json-pointer", "1/a", true], ["relative-json-pointer", "/a", false],
    ["uuid", "123e4567-e89b-12d3-a456-426614174000", true], ["uuid", "urn:uuid:123e4567-e89b-12d3-a456-426614174000", true], ["uuid", "123e4567e89b12d3a456426614174000", false],
  ];
  for (const [format, input, expected] of cases) {
    const s = compile(`{"format":"${format}"}`);
    assert.is(validateValue(s, JSON.stringify(input)).ok, expected, `${format} ${input.slice(0, 40)}`);
  }
  // Formats constrain strings only.
  assert.ok(validateValue(compile('{"format":"email"}'), "12").ok);
});

test("every format finishes on adversarial strings at the value cap", () => {
  const n = VALUE_MAX_BYTES - 16;
  const inputs = [
    "a".repeat(n) + "!",
    "a.".repeat(n / 2) + "!",
    "1".repeat(n) + "x",
    ":".repeat(n),
    "a@" + "a-".repeat(n / 2 - 2) + "!",
    "http://" + "%20".repeat(Math.floor(n / 3) - 4) + " ",
    "{" + "a,".repeat(n / 2 - 2) + "!",
    "/".repeat(n) + "~",
    "2024-01-01T00:00:00." + "1".repeat(n - 40) + "x",
  ];
  for (const f of ["date", "time", "date-time", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uri-template", "json-pointer", "relative-json-pointer", "uuid"]) {
    const s = compile(`{"format":"${f}"}`);
    for (const input of inputs) validateValue(s, JSON.stringify(input));
  }
  assert.ok(true);
});

test("feedback is bounded and never echoes large values", () => {
  const hugeKey = "k".repeat(100_000);
  const s = compile('{"type":"object","additionalProperties":false}');
  const r = validateValue(s, `{"${hugeKey}":"${"v".repeat(100_000)}"}`);
  assert.not.ok(r.ok);
  if (!r.ok) {
    assert.ok(r.errors.length <= FEEDBACK_MAX_ERRORS);
    assert.ok(Buffer.byteLength(r.feedback) <= FEEDBACK_MAX_BYTES);
    assert.ok(r.feedback.length < 600);
    assert.not.match(r.feedback, "v".repeat(50));
  }
  const many = Array.from({ length: 20 }, (_, i) => ({ pointer: `/${"p".repeat(300)}${i}`, message: "m".repeat(300) }));
  const text = formatFeedback(many);
  assert.ok(Buffer.byteLength(text) <= FEEDBACK_MAX_BYTES);
  assert.ok(text.split("\n").length - 1 <= FEEDBACK_MAX_ERRORS);
});

test("validation is fail-fast and errors carry JSON pointers", () => {
  const s = compile('{"type":"object","properties":{"a/b":{"type":"array","items":{"type":"string"}}},"required":["z"]}');
  const r = validateValue(s, '{"z":1,"a/b":["x",2]}');
  assert.not.ok(r.ok);
  if (!r.ok) {
    assert.equal(r.errors, [{ pointer: "/a~1b/1", message: "must be string" }]);
    assert.match(r.feedback, "/a~1b/1: must be string");
  }
  const missing = validateValue(s, "{}");
  assert.ok(!missing.ok && missing.errors[0]?.message === 'must have required property "z"');
});

test("value boundary errors come back as value errors", () => {
  const s = compile("{}");
  for (const [text, rule] of [['{"a":1,"a":2}', "duplicate-key"], ["[1e309]", "number-range"], ['"\\ud800"', "unpaired-surrogate"], ["1 2", "trailing-data"]] as const) {
    const r = validateValue(s, text);
    assert.ok(!r.ok && (r.errors[0]?.message ?? "").startsWith(rule), text);
  }
  assert.ok(validateValue(s, new TextEncoder().encode("null")).ok);
});

test("null is a valid value and distinct from absence", () => {
  const r = validateValue(compile('{"type":"null"}'), "null");
  assert.ok(r.ok && r.value === null && r.canonicalText === "null");
});

test("compileSchema rejects schemas that fail meta-validation with a pointer", () => {
  const r = compileSchema(parse('{"properties":{"a":{"minLength":"3"}}}'));
  assert.not.ok(r.ok);
  if (!r.ok) assert.is(r.errors[0]?.field, "/properties/a/minLength");
});

test.run();
