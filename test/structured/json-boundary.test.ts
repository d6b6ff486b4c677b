import { test } from "uvu";
import * as assert from "uvu/assert";
import { canonicalJson, JsonNumber, parseJsonSafe, storedByteLength, VALUE_MAX_BYTES, VALUE_MAX_DEPTH, VALUE_MAX_NODES, type JsonValue } from "../../src/structured/index.ts";

function rejects(input: string | Uint8Array, rule: string, pointer: string, limits?: Parameters<typeof parseJsonSafe>[1]): void {
  const r = parseJsonSafe(input, limits);
  assert.not.ok(r.ok, `expected ${rule}`);
  if (!r.ok) {
    assert.is(r.error.rule, rule, r.error.message);
    assert.is(r.error.pointer, pointer);
    assert.ok(r.error.message.length > 0);
  }
}

function value(input: string): JsonValue {
  const r = parseJsonSafe(input);
  if (!r.ok) throw new Error(`${r.error.rule} ${r.error.pointer} ${r.error.message}`);
  return r.value;
}

test("parses every JSON type into the exact tree", () => {
  const v = value(' {"a": [1, -0.5e+3, true, false, null, "x"], "b": {}} ');
  assert.ok(v instanceof Map);
  const a = (v as Map<string, JsonValue>).get("a") as JsonValue[];
  assert.ok(a[0] instanceof JsonNumber);
  assert.is((a[1] as JsonNumber).text, "-0.5e+3");
  assert.equal(a.slice(2), [true, false, null, "x"]);
});

test("numbers keep their literal text", () => {
  for (const t of ["9007199254740993", "0.1", "1.0", "1e2", "1E+2", "-0", "0.10", "123456789012345678901234567890"]) {
    const v = value(t);
    assert.ok(v instanceof JsonNumber);
    assert.is((v as JsonNumber).text, t);
  }
});

test("integer literals keep their text exactly (the parser derives it from the value when asked)", () => {
  const literals = ["0", "-0", "7", "-12", "10", "100000", "123456789012345", "-123456789012345", "1234567890123456", "-0.0", "0e0"];
  for (let i = 1; i < 1e15; i *= 7) literals.push(String(i), String(-i), String(i - 1));
  for (const t of literals) {
    const v = value(`[${t}]`) as JsonNumber[];
    assert.is(v[0]?.text, t);
    assert.is(canonicalJson(v), t === "-0" ? "[0]" : `[${canonicalJson(value(t))}]`);
  }
  assert.is((value("-0") as JsonNumber).short, -0);
  assert.ok(Object.is((value("[-0]") as JsonNumber[])[0]?.short, -0));
});

test("object key order is kept", () => {
  assert.equal([...(value('{"b":1,"a":2}') as Map<string, JsonValue>).keys()], ["b", "a"]);
});

test("duplicate keys are rejected with the pointer of the repeated key", () => {
  rejects('{"a":1,"a":2}', "duplicate-key", "/a");
  rejects('{"x":[{"k/~":1,"k/~":2}]}', "duplicate-key", "/x/0/k~1~0");
  rejects('{"a":1,"\\u0061":2}', "duplicate-key", "/a");
});

test("trailing data is rejected", () => {
  rejects('{"a":1} x', "trailing-data", "");
  rejects("1 2", "trailing-data", "");
  rejects("[] []", "trailing-data", "");
  rejects("01", "trailing-data", "");
});

test("invalid UTF-8 bytes are rejected", () => {
  rejects(Uint8Array.from([0x22, 0xc3, 0x28, 0x22]), "invalid-utf8", "");
  rejects(Uint8Array.from([0x22, 0xed, 0xa0, 0x80, 0x22]), "invalid-utf8", ""); // CESU surrogate
  rejects(Uint8Array.from([0x22, 0xc0, 0xaf, 0x22]), "invalid-utf8", ""); // overlong
  rejects(Uint8Array.from([0xef, 0xbb, 0xbf, 0x31]), "syntax", ""); // a BOM is not JSON
  const ok = parseJsonSafe(new TextEncoder().encode('"\u00e9\u{1F600}"'));
  assert.equal(ok, { ok: true, value: "\u00e9\u{1F600}" });
});

test("lone surrogates in a JS string input are rejected", () => {
  rejects('["\ud800"]', "invalid-utf8", "/0");
  rejects('"\udc00x"', "invalid-utf8", "");
  assert.equal(parseJsonSafe('"\ud83d\ude00"'), { ok: true, value: "\u{1F600}" });
});

test("unpaired surrogate escapes are rejected, pairs accepted", () => {
  rejects('"\\ud800"', "unpaired-surrogate", "");
  rejects('{"k":"\\ud800x"}', "unpaired-surrogate", "/k");
  rejects('"\\udc00"', "unpaired-surrogate", "");
  rejects('"\\ud800\\u0041"', "unpaired-surrogate", "");
  rejects('{"\\udfff":1}', "unpaired-surrogate", "");
  assert.equal(parseJsonSafe('"\\ud83d\\ude00"'), { ok: true, value: "\u{1F600}" });
});

test("U+0000 is rejected in strings and keys, escaped or raw", () => {
  rejects('["a\\u0000"]', "nul-character", "/0");
  rejects('{"a\\u0000b":1}', "nul-character", "");
  rejects('"\u0000"', "nul-character", "");
});

test("raw control characters are rejected", () => {
  rejects('"a\nb"', "control-character", "");
  rejects('"\t"', "control-character", "");
});

test("number literal length: 64 characters pass, 65 fail", () => {
  const n64 = "1" + "0".repeat(63);
  assert.is((value(n64) as JsonNumber).text, n64);
  rejects(`[${n64}0]`, "number-too-long", "/0");
  rejects(`{"n":-0.${"1".repeat(63)}}`, "number-too-long", "/n");
});

test("numbers outside float64's finite range are rejected", () => {
  rejects("1e309", "number-range", "");
  rejects("[-1.8e308]", "number-range", "/0");
  rejects("1e-400", "number-range", "");
  rejects("0e-401", "number-range", "");
  // In range, but longer than 64 characters once written out the way jsonb stores it.
  rejects("1.7976931348623157e308", "number-too-long", "");
  rejects("5e-324", "number-too-long", "");
  rejects("0e-400", "number-too-long", "");
});

test("the 64-character cap also applies to the written-out form jsonb stores", () => {
  assert.ok(parseJsonSafe("1e63").ok); // 64 characters written out
  rejects("1e64", "number-too-long", "");
  assert.ok(parseJsonSafe("-1e62").ok);
  rejects("-1e63", "number-too-long", "");
  assert.ok(parseJsonSafe(`1e-62`).ok); // 0. + 61 zeros + 1 = 64
  rejects("1e-63", "number-too-long", "");
  assert.ok(parseJsonSafe("0e-62").ok);
  rejects("0e-63", "number-too-long", "");
  assert.ok(parseJsonSafe("123.456e-2").ok);
});

test("syntax errors", () => {
  for (const bad of ["", " ", "1.", ".5", "+1", "1e", "-", "[1,]", '{"a":1,}', "{a:1}", "'x'", '"\\x"', "nul", "[", '{"a"}', "NaN", "Infinity", '"abc']) {
    const r = parseJsonSafe(bad);
    assert.not.ok(r.ok, bad);
    if (!r.ok) assert.is(r.error.rule, "syntax", bad);
  }
});

test("byte cap: exactly the cap passes, one more byte fails (string and bytes)", () => {
  const at = `"${"a".repeat(VALUE_MAX_BYTES - 2)}"`;
  assert.ok(parseJsonSafe(at).ok);
  assert.ok(parseJsonSafe(Buffer.from(at)).ok);
  rejects(`"${"a".repeat(VALUE_MAX_BYTES - 1)}"`, "max-bytes", "");
  rejects(Buffer.from(`"${"a".repeat(VALUE_MAX_BYTES - 1)}"`), "max-bytes", "");
  // Multibyte characters count as their UTF-8 bytes.
  rejects(`"${"\u00e9".repeat(VALUE_MAX_BYTES / 2)}"`, "max-bytes", "");
});

test("depth cap: exactly the cap passes, one more fails, with no stack overflow far beyond", () => {
  assert.ok(parseJsonSafe("[".repeat(VALUE_MAX_DEPTH) + "]".repeat(VALUE_MAX_DEPTH)).ok);
  rejects("[".repeat(VALUE_MAX_DEPTH + 1) + "]".repeat(VALUE_MAX_DEPTH + 1), "max-depth", "/0".repeat(VALUE_MAX_DEPTH));
  rejects('{"a":'.repeat(VALUE_MAX_DEPTH + 1) + "1" + "}".repeat(VALUE_MAX_DEPTH + 1), "max-depth", "/a".repeat(VALUE_MAX_DEPTH));
  const deep = "[".repeat(100_000);
  const r = parseJsonSafe(deep, { maxDepth: 1_000_000, maxBytes: 1_000_000, maxNodes: 1_000_000 });
  assert.not.ok(r.ok); // unterminated, but no RangeError from the call stack
  if (!r.ok) assert.is(r.error.rule, "syntax");
});

test("node cap: exactly the cap passes, one more fails", () => {
  const arr = (n: number): string => `[${Array(n).fill("0").join(",")}]`;
  assert.ok(parseJsonSafe(arr(VALUE_MAX_NODES - 1)).ok);
  rejects(arr(VALUE_MAX_NODES), "max-nodes", `/${VALUE_MAX_NODES - 1}`);
});

test("scalars after a comma (read by the parser's inner loops) fail with the rule and pointer of their place", () => {
  const cases: [string, string, string][] = [
    ['[1,"\\x"]', "syntax", "/1"], ["[1, 1.]", "syntax", "/1"], ["[0,-]", "syntax", "/1"], ['["a",01]', "syntax", "/1"],
    ["[1,1e999]", "number-range", "/1"], ['["s","\\ud800"]', "unpaired-surrogate", "/1"], ['[1,"a\\u0000"]', "nul-character", "/1"],
    ["[1,2 x]", "syntax", "/1"], ['[1,"s"', "syntax", "/1"], ['{"z":1,"a":"\\x"}', "syntax", "/a"], ['{"z":"s","a":1e999}', "number-range", "/a"],
    ['{"z":1,"a":2 x}', "syntax", "/a"], ['{"z":1,"z":"s"}', "duplicate-key", "/z"], ['{"z":1, "a": 1.}', "syntax", "/a"],
    ['{"z":[1,2],"a":[3,"\\u0000"]}', "nul-character", "/a/1"],
  ];
  for (const [text, rule, pointer] of cases) rejects(text, rule, pointer);
  rejects("[1,2,3]", "max-nodes", "/2", { maxNodes: 3 });
  rejects('{"a":"x","b":"y"}', "max-nodes", "/b", { maxNodes: 2 });
  rejects('[[1],"x",2]', "max-nodes", "/1", { maxNodes: 3 });
  assert.ok(parseJsonSafe('{"a":"x","b":"y"}', { maxNodes: 3 }).ok);
  const mixed = value('[1, "a" ,-2.5e3,[true],{"k":"v", "n" : 0},null]');
  assert.is(canonicalJson(mixed), '[1, "a", -2500, [true], {"k": "v", "n": 0}, null]');
});

test("limits can be overridden per call", () => {
  rejects("[[1]]", "max-depth", "/0", { maxDepth: 1 });
  rejects("[1,2]", "max-nodes", "/1", { maxNodes: 2 });
  rejects("[1,2]", "max-bytes", "", { maxBytes: 4 });
});

test("__proto__ and constructor are ordinary keys", () => {
  const v = value('{"__proto__":{"x":1},"constructor":2}') as Map<string, JsonValue>;
  assert.equal([...v.keys()], ["__proto__", "constructor"]);
  assert.is(canonicalJson(v), '{"__proto__": {"x": 1}, "constructor": 2}');
});

test("canonical text follows jsonb: key order by length then bytes, numbers as numeric", () => {
  assert.is(canonicalJson(value('{"bb":1,"a":[1e2,1.0,1E+2,0.10,-0,1e-3,-0.0,12.500e1],"c":"\\u0001\\t/\\"\u00e9"}')),
    '{"a": [100, 1.0, 100, 0.10, 0, 0.001, 0.0, 125.00], "c": "\\u0001\\t/\\"\u00e9", "bb": 1}');
  // UTF-8 byte order, not UTF-16: U+FF61 (3 bytes) sorts before U+1F600 (4 bytes) by length anyway;
  // two 3-byte keys compare bytewise.
  assert.is(canonicalJson(value('{"\uff61":1,"\u00e9x":2}')), '{"\u00e9x": 2, "\uff61": 1}');
});

test("stored size of integers counted without their text equals the canonical text's size", () => {
  for (const x of ["0", "7", "9", "10", "99", "100", "-1", "-10", "-99", "999999999999999", "-999999999999999", "100000000000000", "1000000000000000", "12.0", "-0", "1e3"]) {
    const r = parseJsonSafe(`[${x},{"a":${x}}]`);
    assert.ok(r.ok, x);
    if (r.ok) assert.is(storedByteLength(r.value), Buffer.byteLength(canonicalJson(r.value)), x);
  }
});

test.run();
