import { test } from "uvu";
import * as assert from "uvu/assert";
import { compareDecimal, decimalKey, isIntegerDecimal, isMultipleOf, parseDecimal, pgNumericText, validateValue } from "../../src/structured/index.ts";
import { compile } from "./helpers.ts";

const d = parseDecimal;

test("decimal parsing normalizes trailing zeros and zero", () => {
  assert.equal(d("1.50e2"), { neg: false, coef: 15n, exp: 1 });
  assert.equal(d("-0.0"), { neg: false, coef: 0n, exp: 0 });
  assert.is(decimalKey(d("1e2")), decimalKey(d("100.000")));
  assert.is.not(decimalKey(d("1e2")), decimalKey(d("-100")));
});

test("comparison is exact beyond 2^53", () => {
  assert.is(compareDecimal(d("9007199254740993"), d("9007199254740992")), 1);
  assert.is(compareDecimal(d("0.30000000000000001"), d("0.3")), 1);
  assert.is(compareDecimal(d("-1"), d("0")), -1);
  assert.is(compareDecimal(d("-0"), d("0.0")), 0);
  assert.is(compareDecimal(d("-2"), d("-10")), 1);
  assert.is(compareDecimal(d("1e-300"), d("0")), 1);
});

test("multipleOf is exact", () => {
  assert.ok(isMultipleOf(d("19.99"), d("0.01")));
  assert.ok(isMultipleOf(d("0.3"), d("0.1")));
  assert.ok(isMultipleOf(d("0"), d("0.7")));
  assert.ok(isMultipleOf(d("-4.5"), d("1.5")));
  assert.ok(isMultipleOf(d("1e300"), d("1e-300")));
  assert.not.ok(isMultipleOf(d("0.29999"), d("0.01")));
  assert.not.ok(isMultipleOf(d("9007199254740993"), d("2")));
});

test("integer check is exact", () => {
  assert.ok(isIntegerDecimal(d("1.0")));
  assert.ok(isIntegerDecimal(d("1e2")));
  assert.ok(isIntegerDecimal(d("12.5e1")));
  assert.not.ok(isIntegerDecimal(d("9007199254740993.5")));
  assert.not.ok(isIntegerDecimal(d("1.00000000000000000001")));
});

test("PostgreSQL numeric text", () => {
  const cases: [string, string][] = [
    ["1e2", "100"], ["1.0", "1.0"], ["1E+2", "100"], ["0.10", "0.10"], ["-0", "0"], ["1e-3", "0.001"],
    ["-0.0", "0.0"], ["12.500e1", "125.00"], ["-0.0e5", "0"], ["0.000e-5", "0.00000000"], ["123e-2", "1.23"], ["-1.5e+3", "-1500"],
  ];
  for (const [input, out] of cases) assert.is(pgNumericText(input), out, input);
});

const schema = compile(`{"type":"object","properties":{
  "price":{"type":"number","multipleOf":0.01},
  "tenth":{"multipleOf":0.1},
  "big":{"type":"integer","maximum":9007199254740992},
  "int":{"type":"integer"},
  "c":{"const":100},
  "e":{"enum":[1.5, {"a": [1e0]}, "x"]},
  "u":{"type":"array","uniqueItems":true},
  "min":{"minimum":-0.5,"exclusiveMaximum":1e-1},
  "xmin":{"exclusiveMinimum":0},
  "intOrString":{"type":["integer","string"]},
  "intOrNumber":{"type":["integer","number"]}
}}`);

function ok(valueText: string): void {
  const r = validateValue(schema, valueText);
  assert.ok(r.ok, `${valueText}: ${r.ok ? "" : r.feedback}`);
}
function bad(valueText: string, pointer: string): void {
  const r = validateValue(schema, valueText);
  assert.not.ok(r.ok, `${valueText} should fail`);
  if (!r.ok) assert.is(r.errors[0]?.pointer, pointer);
}

test("19.99 is a multiple of 0.01; 0.3 of 0.1", () => {
  ok('{"price": 19.99}');
  ok('{"tenth": 0.3}');
  ok('{"price": 1e-2}');
  bad('{"price": 19.999}', "/price");
});

test("9007199254740993 exceeds maximum 9007199254740992", () => {
  ok('{"big": 9007199254740992}');
  bad('{"big": 9007199254740993}', "/big");
});

test("1.0 is an integer; 1.5 and 2^53+0.5 are not", () => {
  ok('{"int": 1.0}');
  ok('{"int": -3e2}');
  bad('{"int": 1.5}', "/int");
  bad('{"int": 9007199254740993.5}', "/int");
  ok('{"intOrString": 2.00}');
  ok('{"intOrString": "s"}');
  bad('{"intOrString": 2.5}', "/intOrString");
  ok('{"intOrNumber": 2.5}');
});

test("1e2 equals const 100; enum compares exactly and structurally", () => {
  ok('{"c": 1e2}');
  ok('{"c": 100.000}');
  bad('{"c": 100.0000000000000000001}', "/c");
  ok('{"e": 15e-1}');
  ok('{"e": {"a": [1.00]}}');
  bad('{"e": {"a": [1.0000000000000000001]}}', "/e");
  bad('{"e": 1.5000000000000000001}', "/e");
});

test("[1, 1.0] is not unique; nested structures compare exactly", () => {
  bad('{"u": [1, 1.0]}', "/u");
  bad('{"u": [{"a":1,"b":2}, {"b":2.0,"a":1}]}', "/u");
  ok('{"u": [9007199254740992, 9007199254740993]}');
  ok('{"u": [1, "1", true, null, [1], {"1":1}]}');
});

test("bounds are exact", () => {
  ok('{"min": -0.5}');
  bad('{"min": -0.50000000000000000001}', "/min");
  ok('{"min": 0.09999999999999999999}');
  bad('{"min": 0.1}', "/min");
  bad('{"xmin": 0}', "/xmin");
  ok('{"xmin": 1e-60}');
});

test("a number at the root is found exactly", () => {
  const root = compile('{"type":"integer","maximum":9007199254740992}');
  assert.ok(validateValue(root, "9007199254740992").ok);
  assert.not.ok(validateValue(root, "9007199254740993").ok);
  assert.not.ok(validateValue(root, "9007199254740992.5").ok);
});

test("exact keywords apply inside combinators", () => {
  const s = compile('{"anyOf":[{"type":"integer","maximum":9007199254740992},{"type":"string"}]}');
  assert.ok(validateValue(s, "9007199254740992").ok);
  assert.not.ok(validateValue(s, "9007199254740993").ok);
  const n = compile('{"not":{"const":1}}');
  assert.not.ok(validateValue(n, "1.0").ok);
  assert.ok(validateValue(n, "1.0000000000000000000001").ok);
});

test("accepted values keep their exact text in canonical form", () => {
  const r = validateValue(compile("{}"), '{"n": 123456789012345678901234567890.000, "m": 1e2}');
  assert.ok(r.ok);
  if (r.ok) assert.is(r.canonicalText, '{"m": 100, "n": 123456789012345678901234567890.000}');
});

test.run();
