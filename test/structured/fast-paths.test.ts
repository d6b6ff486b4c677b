// The validator decides most numbers on their float (JsonNumber.short), checks formats by hand and
// enumerates object keys from a cache. These tests compare each shortcut with the slow, obviously
// exact reference it replaces, on random and boundary inputs.
import fc from "fast-check";
import { RE2JS } from "re2js";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { canonicalJson, sortedKeys, storedByteLength } from "../../src/structured/canonical.ts";
import { KeyPattern } from "../../src/structured/ajv-patches.ts";
import { shortFloat } from "../../src/structured/decimal.ts";
import { ownKeys, ownValues, withExactData } from "../../src/structured/exact-data.ts";
import { FORMAT_CHECKS } from "../../src/structured/formats.ts";
import { compareDecimal, isIntegerDecimal, isMultipleOf, parseDecimal, parseJsonSafe, validateValue } from "../../src/structured/index.ts";
import { compileRe2 } from "../../src/structured/patterns.ts";
import { numberLiteral } from "./arbitraries.ts";
import { compile } from "./helpers.ts";

// Literals near every edge of "short": 15/16/17 significant digits, 2^53, the normal range, zeros.
const edgeLiteral = fc.constantFrom(
  "0", "-0", "0.0", "1", "-1", "1.0", "0.1", "0.3", "0.30000000000000004", "0.30000000000000001", "19.99", "0.01",
  "123456789012345", "1234567890123456", "12345678901234567", "123456789012345.0", "12345678901234.5", "1234567890123.45",
  "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993", "9007199254740992.5",
  "1e-307", "1e-308", "9.99999999999999e-308", "2.2250738585072014e-308", "5e-324", "1e307", "1e308", "9.99999999999999e307",
  "1.7976931348623157e308", "0.99999999999999", "0.999999999999999", "0.9999999999999999", "1e15", "1e16", "1e22", "1e23",
  "100", "1e2", "100.000", "1.00000000000000000001", "-4.5", "1.5", "7", "3", "2",
);
const literal = fc.oneof(numberLiteral, edgeLiteral).filter((t) => {
  const n = Number(t);
  return t.length <= 64 && Number.isFinite(n) && (n !== 0 || !/[1-9]/.test(t.split(/[eE]/)[0] ?? ""));
});

const sign = (x: number): number => (x < 0 ? -1 : x > 0 ? 1 : 0);

test("short floats order, compare and classify exactly like the decimals", () => {
  fc.assert(
    fc.property(literal, literal, (a, b) => {
      const fa = shortFloat(a);
      const fb = shortFloat(b);
      const da = parseDecimal(a);
      if (fa !== undefined) assert.is(Number.isInteger(fa), isIntegerDecimal(da), a);
      if (fa !== undefined && fb !== undefined) assert.is(sign(fa - fb), compareDecimal(da, parseDecimal(b)), `${a} vs ${b}`);
    }),
    { numRuns: 3000 },
  );
});

function parsed(text: string): boolean | "rejected" {
  return validateValue(compile("{}"), text).ok ? true : "rejected";
}

test("exact keywords agree with the decimal reference on random literals", () => {
  fc.assert(
    fc.property(literal, literal, (x, limit) => {
      if (parsed(x) !== true || parsed(limit) !== true) return;
      const dx = parseDecimal(x);
      const dl = parseDecimal(limit);
      const c = compareDecimal(dx, dl);
      const check = (schema: string, expected: boolean): void => {
        for (const value of [x, `{"a":${x}}`, `[${x}]`]) {
          const wrapped = value === x ? schema : value.startsWith("{") ? `{"properties":{"a":${schema}}}` : `{"items":${schema}}`;
          assert.is(validateValue(compile(wrapped), value).ok, expected, `${wrapped} on ${value}`);
        }
      };
      check(`{"minimum":${limit}}`, c >= 0);
      check(`{"maximum":${limit}}`, c <= 0);
      check(`{"exclusiveMinimum":${limit}}`, c > 0);
      check(`{"exclusiveMaximum":${limit}}`, c < 0);
      check(`{"type":"integer"}`, isIntegerDecimal(dx));
      check(`{"const":${limit}}`, c === 0);
      check(`{"enum":[${limit},"x"]}`, c === 0);
      if (!dl.neg && dl.coef !== 0n) check(`{"multipleOf":${limit}}`, isMultipleOf(dx, dl));
      assert.is(validateValue(compile('{"uniqueItems":true}'), `[${x},${limit}]`).ok, c !== 0, `unique [${x},${limit}]`);
      assert.is(validateValue(compile('{"uniqueItems":true}'), `[[${x}],{"k":${limit}},[${limit}]]`).ok, c !== 0);
    }),
    { numRuns: 100 },
  );
});

test("numeric keywords test exact floats inline; beside a long number the exact call decides", () => {
  const schema = '{"items":{"type":"integer","multipleOf":3,"minimum":-6,"exclusiveMaximum":9}}';
  const source = compile(schema).validate.toString();
  for (const inline of ["Number.isInteger(", "% 3 === 0", ">= -6", "< 9"]) assert.ok(source.includes(inline), `inline test ${inline}`);
  // The same items with and without a long number elsewhere in the array (exactState.hasLong).
  const items = ["-6", "-7", "0", "3", "6", "9", "4.5", "3.0", "6.000000000000001", "-9", "1e0", "3e0", "-0"];
  for (const long of ["", ",9007199254740993", ",0.30000000000000001"]) {
    for (const x of items) {
      const d = parseDecimal(x);
      const expected = isIntegerDecimal(d) && isMultipleOf(d, parseDecimal("3")) && compareDecimal(d, parseDecimal("-6")) >= 0 && compareDecimal(d, parseDecimal("9")) < 0;
      const r = validateValue(compile(schema), `[${x}${long}]`);
      assert.is(r.ok || r.errors[0]?.pointer !== "/0", expected, `[${x}${long}]`);
    }
  }
});

test("long numbers nested in containers are found for const, enum and uniqueItems", () => {
  const c = compile('{"const":{"a":[9007199254740993, 0.1]}}');
  assert.ok(validateValue(c, '{"a":[9007199254740993, 1e-1]}').ok);
  assert.not.ok(validateValue(c, '{"a":[9007199254740992, 0.1]}').ok);
  const e = compile('{"enum":[[1.00000000000000000001], 2]}');
  assert.ok(validateValue(e, "[1.00000000000000000001]").ok);
  assert.not.ok(validateValue(e, "[1]").ok);
  const u = compile('{"uniqueItems":true}');
  assert.ok(validateValue(u, "[9007199254740993, 9007199254740992, [9007199254740993], [9007199254740992]]").ok);
  assert.not.ok(validateValue(u, "[1, 1.00000000000000000001, 1e0]").ok);
  assert.ok(validateValue(u, "[1, 1.00000000000000000001]").ok);
  assert.not.ok(validateValue(u, "[-0, 0.0]").ok);
  const root = compile('{"multipleOf":3}');
  assert.ok(validateValue(root, "9007199254740993").ok); // 3 x 3002399751580331
  assert.not.ok(validateValue(root, "9007199254740995").ok);
});

test("object keys are enumerated in for…in order (integer-like keys first)", () => {
  const s = compile('{"additionalProperties":{"type":"string"}}');
  const many = `{${Array.from({ length: 100 }, (_, i) => `"k${i}":"v"`).join(",")},"b":1,"10":2,"2":3}`;
  for (const text of ['{"b":1,"10":2,"2":3}', many]) {
    const r = validateValue(s, text);
    assert.ok(!r.ok && r.errors[0]?.pointer === "/2", JSON.stringify(r));
  }
  const names = compile('{"propertyNames":{"maxLength":1},"patternProperties":{"^[0-9]+$":{"type":"string"}}}');
  const r = validateValue(names, '{"a":"x","zz":"x","5":"x"}');
  assert.ok(!r.ok && r.errors[1]?.pointer === "/zz", JSON.stringify(r));
  const r2 = validateValue(names, '{"a":"x","7":1}');
  assert.ok(!r2.ok && r2.errors[0]?.pointer === "/7", JSON.stringify(r2));
});

// The RE2 patterns date, time and date-time used to be (formats.ts).
const re2 = (source: string, i = false): RE2JS => RE2JS.compile(source, i ? RE2JS.CASE_INSENSITIVE : 0);
const DATE = re2("^(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)$");
const TIME = re2("^(\\d\\d):(\\d\\d):(\\d\\d)(?:\\.\\d+)?(z|([+-])(\\d\\d):(\\d\\d))$", true);
const DATE_TIME = re2("^(\\d\\d\\d\\d-\\d\\d-\\d\\d)[t ](.*)$", true);
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function refDate(s: string): boolean {
  const m = DATE.exec(s);
  if (m === null) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const max = mo === 2 && leap ? 29 : (DAYS[mo] ?? 0);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= max;
}
function refTime(s: string): boolean {
  const m = TIME.exec(s);
  if (m === null) return false;
  const [hr, min, sec] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const sign = m[5] === "-" ? -1 : 1;
  const tzH = Number(m[6] ?? 0);
  const tzM = Number(m[7] ?? 0);
  if (tzH > 23 || tzM > 59) return false;
  if (hr <= 23 && min <= 59 && sec <= 59) return true;
  const utcMin = min - tzM * sign;
  const utcHr = hr - tzH * sign - (utcMin < 0 ? 1 : 0);
  return (utcHr === 23 || utcHr === -1) && (utcMin === 59 || utcMin === -1) && sec === 60;
}
function refDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  return m !== null && refDate(String(m[1])) && refTime(String(m[2]));
}

test("hand-written date, time and date-time accept exactly what the RE2 patterns did", () => {
  const chars = fc.constantFrom(..."0123456789:-+.zZtT \n\u0660x");
  const mutate = (base: string): fc.Arbitrary<string> =>
    fc.tuple(fc.array(fc.tuple(fc.nat(base.length), chars, fc.boolean()), { maxLength: 3 })).map(([edits]) => {
      let s = base;
      for (const [i, c, insert] of edits) s = s.slice(0, i) + c + s.slice(insert ? i : i + 1);
      return s;
    });
  const seeds = ["2024-02-29", "2023-02-28", "23:59:60Z", "23:59:60+00:00", "00:59:60+01:00", "12:00:00.123-05:30", "2024-01-01T00:00:00Z", "2016-12-31t23:59:60z", "1990-12-31 15:59:60-08:00"];
  const input = fc.oneof(fc.constantFrom(...seeds).chain(mutate), fc.array(chars, { maxLength: 30 }).map((cs) => cs.join("")));
  fc.assert(
    fc.property(input, (s) => {
      assert.is(FORMAT_CHECKS.date(s), refDate(s), `date ${JSON.stringify(s)}`);
      assert.is(FORMAT_CHECKS.time(s), refTime(s), `time ${JSON.stringify(s)}`);
      assert.is(FORMAT_CHECKS["date-time"](s), refDateTime(s), `date-time ${JSON.stringify(s)}`);
    }),
    { numRuns: 5000 },
  );
});

test("key patterns (RE2Set DFA, then the walk over its built states) give the same verdict as RE2JS.test", () => {
  const patterns = [
    "^(a{1,20}b{1,20}){1,10}[0-9]+$", "^(?:a|b){2,40}[0-9]{1,4}$", "ab", "^$", "", "^a", "b$", "^[^a]*$", "(x+x+)+y",
    "^\\p{L}+$", "é|ß", "^.{2}$", "^[\\u0100-\\uffff]", "\\d\\w\\s", "(?i)^AB", "^😀.$", "a|^b|c$", "^\\S+@\\S+$",
    // Empty-width assertions whose verdict depends on the characters around them, and a newline.
    "\\ba\\b", "\\Bb", "(?m)^b$", "(?m)a$", "(?s)a.b", "a.b", "^\\xff+\\x00?$", "[ß-ÿ]{2}",
  ];
  const key = fc.oneof(
    fc.string({ unit: fc.constantFrom("a", "b", "x", "y", "0", "7", " ", "@", "é", "ß", "A", "B", "😀", "\u0101", "\n", "\u00ff", "_") , maxLength: 30 }),
    fc.string({ unit: "grapheme", maxLength: 12 }),
  );
  for (const p of patterns) {
    const re = compileRe2(p);
    const kp = new KeyPattern(re);
    assert.not.equal(kp.toString(), re.toString());
    fc.assert(
      fc.property(key, (k) => {
        // The first test of a key may build DFA states; the second one only walks them.
        assert.is(kp.test(k), re.test(k), `${p} on ${JSON.stringify(k)}`);
        assert.is(kp.test(k), re.test(k), `${p} on ${JSON.stringify(k)} (again)`);
      }),
      { numRuns: 400 },
    );
  }
});

test("key patterns agree with RE2JS.test when the DFA outgrows its state budget and resets", () => {
  // The 15th character from the end decides: ~2^15 DFA states, far beyond the 1 MiB budget.
  const re = compileRe2("a[ab]{14}$");
  const kp = new KeyPattern(re);
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom("a", "b"), minLength: 10, maxLength: 60 }), (k) => {
      assert.is(kp.test(k), re.test(k), k);
      assert.is(kp.test(k), re.test(k), `${k} (again)`);
    }),
    { numRuns: 3000 },
  );
});

test("key loops read the same values as data[key], in nested objects and with errors", () => {
  const s = compile(
    '{"anyOf":[{"additionalProperties":{"type":"integer"}},{"patternProperties":{"^k":{"additionalProperties":{"type":"string"}},"^z":{"type":"boolean"}}}]}',
  );
  const wide = (v: string): string => `{${Array.from({ length: 80 }, (_, i) => `"k${i}":${v}`).join(",")}}`;
  assert.ok(validateValue(s, wide("1")).ok);
  assert.ok(validateValue(s, wide(`{"a":"x"}`)).ok);
  assert.ok(validateValue(s, `{"z":true,"k1":${wide('"s"')}}`).ok);
  const bad = validateValue(s, `{"z":true,"k1":${wide('"s"').replace('"k7":"s"', '"k7":5')}}`);
  assert.ok(!bad.ok && bad.errors.some((e) => e.pointer === "/k1/k7"), JSON.stringify(bad));
  const badZ = validateValue(s, `{"k1":{},"z":1}`);
  assert.ok(!badZ.ok && badZ.errors.some((e) => e.pointer === "/z"), JSON.stringify(badZ));
  for (const text of ['{"a":1,"b":"x"}', wide("1").replace('"k79":1', '"k79":"x"')]) {
    const r = validateValue(compile('{"additionalProperties":{"type":"integer"}}'), text);
    assert.ok(!r.ok && (r.errors[0]?.pointer === "/b" || r.errors[0]?.pointer === "/k79"), JSON.stringify(r));
  }
});

test("the key loops' arrays for wide objects, taken from the parsed Map, are Object.keys/values order", () => {
  const name = fc.string({ unit: fc.constantFrom("a", "k", "0", "1", "9", "-", "_", "é"), minLength: 1, maxLength: 4 });
  fc.assert(
    fc.property(fc.uniqueArray(name, { minLength: 60, maxLength: 120 }), fc.boolean(), (names, nested) => {
      const text = `{${names.map((k, i) => `${JSON.stringify(k)}:${nested && i % 3 === 0 ? `{"v":${i}}` : i}`).join(",")}}`;
      const parsed = parseJsonSafe(text);
      if (!parsed.ok) throw new Error(parsed.error.message);
      withExactData(parsed.value, (data) => {
        const o = data as Record<string, unknown>;
        const keys = ownKeys(o);
        assert.equal(keys, Object.keys(o), text);
        assert.equal(ownValues(o, keys), Object.values(o), text);
      });
    }),
    { numRuns: 300 },
  );
});

// Wide objects (> 64 keys) get as properties only the names the schema may read by name
// (compile.ts propertyReads). `"minProperties":0` checks nothing but reads whole objects, so it makes
// the same schema validate full objects: the reference.
const wideValue = (n: number, item: (i: number) => string): string => `{${Array.from({ length: n }, (_, i) => `"k${i}":${item(i)}`).join(",")}}`;

test("keywords that read properties by name or whole objects see them on wide objects (else the verdict would be wrong)", () => {
  const wide = wideValue(80, (i) => String(i));
  const other = wideValue(80, (i) => String(i + 1));
  const cases: [string, string, boolean, "all" | string[]][] = [
    ['{"properties":{"k5":{"type":"string"}}}', wide, false, ["k5"]],
    ['{"required":["k5"]}', wide, true, ["k5"]],
    ['{"dependencies":{"k5":["nope"]}}', wide, false, ["k5", "nope"]],
    ['{"dependencies":{"k5":["k70"]}}', wide, true, ["k5", "k70"]],
    ['{"minProperties":70}', wide, true, "all"],
    ['{"maxProperties":70}', wide, false, "all"],
    [`{"const":${wide}}`, wide, true, "all"],
    [`{"enum":[${wide}]}`, wide, true, "all"],
    ['{"uniqueItems":true}', `[${wide},${other}]`, true, "all"],
    ['{"anyOf":[{"not":{}},{"allOf":[{"required":["k79"]}]}]}', wide, true, ["k79"]],
  ];
  for (const [schema, value, ok, reads] of cases) {
    const c = compile(schema);
    if (reads === "all") assert.is(c.propertyReads, "all", schema);
    else for (const name of reads) assert.ok(c.propertyReads !== "all" && c.propertyReads.has(name), `${schema} reads ${name}`);
    assert.is(validateValue(c, value).ok, ok, schema);
  }
  const loopsOnly = compile('{"patternProperties":{"^k":{"type":"integer"}},"propertyNames":{"maxLength":3}}').propertyReads;
  assert.ok(loopsOnly !== "all" && !loopsOnly.has("k5"));
});

test("wide objects with only the names the schema reads give the same verdicts and errors as full objects", () => {
  const name = fc.constantFrom("k1", "k5", "k70", "zz", "nope");
  const leaf = fc.constantFrom('{"type":"integer"}', '{"type":["integer","string"]}', '{"maximum":50}', '{"type":"string","maxLength":2}', "{}", "false");
  const fragment = fc.letrec<{ s: string }>((tie) => ({
    s: fc.oneof(
      { depthSize: "small" },
      leaf.map((l) => `{"additionalProperties":${l}}`),
      fc.tuple(leaf, leaf).map(([a, b]) => `{"patternProperties":{"^k[0-4]":${a},"^z":${b}}}`),
      fc.tuple(leaf, leaf).map(([a, b]) => `{"patternProperties":{"^k1":${a}},"additionalProperties":${b}}`),
      fc.constantFrom('{"propertyNames":{"maxLength":3}}', '{"propertyNames":{"pattern":"^k"}}', '{"type":"object"}'),
      fc.tuple(name, leaf, leaf).map(([n, a, b]) => `{"properties":{"${n}":${a}},"additionalProperties":${b}}`),
      fc.array(name, { minLength: 1, maxLength: 3 }).map((ns) => `{"required":${JSON.stringify([...new Set(ns)])}}`),
      fc.tuple(name, name, name, tie("s")).filter(([a, , c]) => a !== c).map(([a, b, c, x]) => `{"dependencies":{"${a}":["${b}"],"${c}":${x}}}`),
      tie("s").map((x) => `{"additionalProperties":${x}}`),
      fc.tuple(fc.constantFrom("allOf", "anyOf", "oneOf"), fc.array(tie("s"), { minLength: 1, maxLength: 3 })).map(([k, xs]) => `{"${k}":[${xs.join(",")}]}`),
      tie("s").map((x) => `{"not":${x}}`),
      fc.tuple(tie("s"), tie("s")).map(([a, b]) => `{"if":${a},"then":${b}}`),
    ),
  })).s;
  const item = fc.constantFrom("1", "77", '"ab"', '"abc"', "true", wideValue(70, (i) => String(i)), wideValue(66, () => '"s"'));
  const value = fc.tuple(fc.integer({ min: 65, max: 90 }), fc.array(item, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([n, items, z]) => {
    const v = wideValue(n, (i) => items[i % items.length] ?? "1");
    return z ? `{"zz":"x",${v.slice(1)}` : v;
  });
  fc.assert(
    fc.property(fragment, value, (schema, v) => {
      const partial = compile(schema);
      const reference = compile(`{"allOf":[${schema}],"minProperties":0}`);
      assert.ok(partial.propertyReads !== "all", schema);
      assert.is(reference.propertyReads, "all");
      const a = validateValue(partial, v);
      const b = validateValue(reference, v);
      assert.is(a.ok, b.ok, schema);
      if (!a.ok && !b.ok) assert.equal(a.errors, b.errors, schema);
    }),
    { numRuns: 400 },
  );
});

test("the stored size of strings and keys equals the stored text's bytes, at every escaping edge", () => {
  const unit = fc.constantFrom("a", " ", "!", "#", "[", "]", "~", '"', "\\", "\u001f", "\u0000", "\u007f", "\u0080", "é", "\u2028", "😀", "\ud800");
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 12 }), (s) => {
      for (const v of [s, new Map([[s, s]])] as const) assert.is(storedByteLength(v), Buffer.byteLength(canonicalJson(v), "utf8"), JSON.stringify(s));
    }),
    { numRuns: 2000 },
  );
});

test("sortedKeys groups many ASCII keys by length exactly like the comparator", () => {
  const ref = (keys: string[]): string[] => [...keys].sort((x, y) => x.length - y.length || (x < y ? -1 : x > y ? 1 : 0));
  fc.assert(
    fc.property(fc.uniqueArray(fc.string({ unit: fc.constantFrom("a", "b", "Z", "0", "~", " ", "\u007f"), maxLength: 8 }), { minLength: 60, maxLength: 200 }), (keys) => {
      assert.equal(sortedKeys(keys), ref(keys));
    }),
    { numRuns: 300 },
  );
});

test.run();
