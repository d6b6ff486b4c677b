// The keywords that compare numbers and values exactly (minimum, multipleOf, integer, const, enum,
// uniqueItems, as the screen renames them: chatdMinimum, ...), as ajv keyword definitions.
//
// They are code keywords: the generated validator calls `check(data, parentData,
// parentDataProperty)` inline. (As ajv function keywords, every call also built an instancePath
// string with two regex replaces and a context object, per number per branch: ~0.7 µs of the
// ~1 µs each check cost.) Errors are the same objects as before: this keyword, the message, `{}`.
//
// The numeric ones also generate an inline test on the float for values without long numbers
// (exact-data.ts exactState.hasLong false: every float ajv sees is exact), before the call: a call per
// number per branch was ~40% of ajv's time on 8 allOf branches over 4,094 integers (~7 ns per check,
// the calls not inlined into ajv's large generated function). The inline test only ever says "valid";
// when it does not hold, the call decides, so the verdict and the error are the call's.

import { _, type Code, type CodeKeywordDefinition, type KeywordCxt, type KeywordDefinition } from "ajv";
import type { DataValidateFunction } from "ajv/dist/types/index.js";
import { compareDecimal, isIntegerDecimal, isMultipleOf, parseDecimal, type Decimal } from "./decimal.ts";
import { equalityKeyAt, exactState, longNumberAt } from "./exact-data.ts";
import { JsonNumber } from "./json-boundary.ts";

type Check = (data: unknown, parent: unknown, prop: unknown) => boolean;
/** An inline test on `data`, a number, that implies the keyword holds when every number is exact. */
type FloatTest = (data: Code) => Code;

function exactKeyword(keyword: string, schemaType: "string" | "boolean" | "array", message: (schema: unknown) => string, make: (schema: unknown) => Check,
  floatTest?: (schema: unknown) => FloatTest | undefined): CodeKeywordDefinition {
  return {
    keyword,
    schemaType,
    error: { message: (cxt) => message(cxt.schema) },
    code(cxt: KeywordCxt) {
      const { gen, data } = cxt;
      const check = gen.scopeValue("keyword", { ref: make(cxt.schema) });
      const call = _`${check}(${data}, ${cxt.it.parentData}, ${cxt.it.parentDataProperty})`;
      const test = floatTest?.(cxt.schema);
      if (test === undefined) return cxt.pass(call);
      const state = gen.scopeValue("keyword", { ref: exactState });
      cxt.pass(_`(typeof ${data} != "number" || (!${state}.hasLong && ${test(data)}) || ${call})`);
    },
  };
}

/** The exact value of a number ajv sees: its literal when the float is not exact, else the float's. */
function decimalAt(x: number, parent: unknown, prop: unknown): Decimal {
  return longNumberAt(parent, prop)?.decimal ?? parseDecimal(String(x));
}

function bound(keyword: string, op: "<=" | ">=" | "<" | ">", ok: (cmp: number) => boolean): CodeKeywordDefinition {
  const shortLimit = (schema: unknown): number | undefined => new JsonNumber(String(schema)).short;
  return exactKeyword(keyword, "string", (schema) => `must be ${op} ${String(schema)}`, (schema) => {
    const limit = new JsonNumber(String(schema));
    const f = limit.short;
    return (data, parent, prop) => {
      if (typeof data !== "number") return true;
      // Both floats exact: comparing them is comparing the decimals (decimal.ts shortFloat).
      if (f !== undefined && longNumberAt(parent, prop) === undefined) return ok(data < f ? -1 : data > f ? 1 : 0);
      return ok(compareDecimal(decimalAt(data, parent, prop), limit.decimal));
    };
  }, (schema) => {
    // A short limit is a float whose value is the literal's, printed back by `${f}` exactly.
    const f = shortLimit(schema);
    if (f === undefined) return undefined;
    const operator = { "<=": _`<=`, ">=": _`>=`, "<": _`<`, ">": _`>` }[op];
    return (data) => _`${data} ${operator} ${f}`;
  });
}

export const EXACT_KEYWORD_DEFS: readonly KeywordDefinition[] = [
  bound("chatdMinimum", ">=", (c) => c >= 0),
  bound("chatdMaximum", "<=", (c) => c <= 0),
  bound("chatdExclusiveMinimum", ">", (c) => c > 0),
  bound("chatdExclusiveMaximum", "<", (c) => c < 0),
  exactKeyword("chatdMultipleOf", "string", (schema) => `must be multiple of ${String(schema)}`, (schema) => {
    const d = new JsonNumber(String(schema));
    // A safe integer divisor and a safe integer value are both exact floats and `%` (fmod) is exact.
    const intDivisor = Number.isSafeInteger(d.short) ? d.short : undefined;
    return (data, parent, prop) => {
      if (typeof data !== "number") return true;
      if (intDivisor !== undefined && Number.isSafeInteger(data) && longNumberAt(parent, prop) === undefined) return data % intDivisor === 0;
      return isMultipleOf(decimalAt(data, parent, prop), d.decimal);
    };
  }, (schema) => {
    const divisor = new JsonNumber(String(schema)).short;
    if (divisor === undefined || !Number.isSafeInteger(divisor)) return undefined;
    return (data) => _`Number.isSafeInteger(${data}) && ${data} % ${divisor} === 0`;
  }),
  // An exact float is an integer exactly when the decimal is (see shortFloat).
  exactKeyword("chatdInteger", "boolean", () => "must be integer", () => (data, parent, prop) => {
    if (typeof data !== "number") return true;
    const long = longNumberAt(parent, prop);
    return long === undefined ? Number.isInteger(data) : isIntegerDecimal(long.decimal);
  }, () => (data) => _`Number.isInteger(${data})`),
  exactKeyword("chatdConst", "string", () => "must be equal to constant", (schema) => {
    const key = String(schema);
    return (data, parent, prop) => equalityKeyAt(data, parent, prop) === key;
  }),
  exactKeyword("chatdEnum", "array", () => "must be equal to one of the allowed values", (schema) => {
    const keys = schema as string[];
    const allowed = new Set(keys);
    // A string's key is JSON.stringify(string): test the raw strings without building keys.
    const strings = new Set(keys.filter((k) => k.startsWith('"')).map((k) => JSON.parse(k) as string));
    return (data, parent, prop) => (typeof data === "string" ? strings.has(data) : allowed.has(equalityKeyAt(data, parent, prop)));
  }),
  // A function keyword: its message names the duplicate items (one call per array, not per item).
  {
    keyword: "chatdUniqueItems",
    schemaType: "boolean",
    errors: true,
    compile() {
      const fn: DataValidateFunction = (data: unknown) => {
        if (!Array.isArray(data)) return true;
        // Exact floats are keyed by the float itself (Map: 0 and -0 are one key); a long number's
        // key never equals an exact float's value, so the two maps cannot miss a duplicate.
        const floats = new Map<number, number>();
        const others = new Map<string, number>();
        for (let i = 0; i < data.length; i++) {
          const x: unknown = data[i];
          let j: number | undefined;
          if (typeof x === "number" && longNumberAt(data, i) === undefined) {
            j = floats.get(x);
            if (j === undefined) floats.set(x, i);
          } else {
            const key = equalityKeyAt(x, data, i);
            j = others.get(key);
            if (j === undefined) others.set(key, i);
          }
          if (j !== undefined) {
            fn.errors = [{ keyword: "chatdUniqueItems", message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: {} }];
            return false;
          }
        }
        return true;
      };
      return fn;
    },
  },
];
