// The JSON safety boundary: every untrusted JSON text (schemas, finalizer arguments, hook payloads,
// values read back from the database) enters through parseJsonSafe. JSON.parse cannot be used: it
// keeps the last of duplicate keys, rounds numbers to float64 and accepts lone surrogate escapes.
// No maintained parser does all of this, so this one is hand-written and iterative (an explicit
// stack, depth checked while parsing), so hostile nesting cannot overflow the call stack.

import { VALUE_LIMITS, type JsonLimits } from "./caps.ts";
import { numberLiteralProblem, type BoundaryError, type BoundaryRule } from "./json-rules.ts";
import { JsonNumber, pointerOf, type JsonArray, type JsonObject, type JsonValue } from "./json-value.ts";

export { limitError, type BoundaryError, type BoundaryRule } from "./json-rules.ts";
export { escapePointerSegment, isJsonNumber, isJsonObject, JsonNumber, type JsonArray, type JsonObject, type JsonValue } from "./json-value.ts";

export type ParseResult = { ok: true; value: JsonValue } | { ok: false; error: BoundaryError };

class BoundaryFailure extends Error {
  readonly rule: BoundaryRule;
  readonly at: readonly (string | number)[];
  constructor(rule: BoundaryRule, message: string, at: readonly (string | number)[]) {
    super(message);
    this.rule = rule;
    this.at = at;
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

interface ArrayFrame {
  arr: JsonArray;
  map?: undefined;
  key?: undefined;
}
interface ObjectFrame {
  arr?: undefined;
  map: JsonObject;
  key: string;
}
type Frame = ArrayFrame | ObjectFrame;

function isWs(c: number): boolean {
  // Most characters tested are not whitespace (compact JSON has none): one comparison decides them.
  return c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09);
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function parseText(text: string, limits: JsonLimits): JsonValue {
  const len = text.length;
  let pos = 0;
  let nodes = 0;
  const stack: Frame[] = [];
  const path: (string | number)[] = [];

  const fail = (rule: BoundaryRule, message: string, at: readonly (string | number)[] = path): never => {
    throw new BoundaryFailure(rule, message, at.slice());
  };
  const skipWs = (): void => {
    while (pos < len && isWs(text.charCodeAt(pos))) pos++;
  };
  /** The character at pos after whitespace (NaN at the end). */
  const nextChar = (): number => {
    const c = text.charCodeAt(pos);
    if (!isWs(c)) return c;
    skipWs();
    return text.charCodeAt(pos);
  };
  const describe = (): string => (pos >= len ? "end of input" : `character ${JSON.stringify(text[pos])} at offset ${pos}`);

  const readHex4 = (): number => {
    if (pos + 4 > len) fail("syntax", "truncated \\u escape");
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const h = hexValue(text.charCodeAt(pos + i));
      if (h < 0) fail("syntax", "invalid \\u escape");
      v = v * 16 + h;
    }
    pos += 4;
    return v;
  };

  const readString = (): string => {
    pos++; // opening quote
    let out = "";
    let start = pos;
    for (;;) {
      if (pos >= len) fail("syntax", "unterminated string");
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        out += text.slice(start, pos);
        pos++;
        return out;
      }
      if (c === 0x5c) {
        out += text.slice(start, pos);
        pos++;
        const e = text.charCodeAt(pos);
        pos++;
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += "\\"; break;
          case 0x2f: out += "/"; break;
          case 0x62: out += "\b"; break;
          case 0x66: out += "\f"; break;
          case 0x6e: out += "\n"; break;
          case 0x72: out += "\r"; break;
          case 0x74: out += "\t"; break;
          case 0x75: {
            const u = readHex4();
            if (u === 0) fail("nul-character", "U+0000 is not allowed");
            if (u >= 0xdc00 && u <= 0xdfff) fail("unpaired-surrogate", "unpaired low surrogate escape");
            if (u >= 0xd800 && u <= 0xdbff) {
              if (text.charCodeAt(pos) !== 0x5c || text.charCodeAt(pos + 1) !== 0x75) {
                fail("unpaired-surrogate", "unpaired high surrogate escape");
              }
              pos += 2;
              const lo = readHex4();
              if (lo < 0xdc00 || lo > 0xdfff) fail("unpaired-surrogate", "unpaired high surrogate escape");
              out += String.fromCharCode(u, lo);
            } else {
              out += String.fromCharCode(u);
            }
            break;
          }
          default:
            fail("syntax", "invalid escape sequence");
        }
        start = pos;
        continue;
      }
      if (c < 0x20) {
        if (c === 0) fail("nul-character", "U+0000 is not allowed");
        fail("control-character", "unescaped control character in string");
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        // Only reachable for string input: decoded bytes never contain lone surrogates.
        const next = text.charCodeAt(pos + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          pos += 2;
          continue;
        }
        fail("invalid-utf8", "lone surrogate in input text");
      }
      pos++;
    }
  };

  const digitsFrom = (): number => {
    const s = pos;
    while (pos < len) {
      const d = text.charCodeAt(pos);
      if (d < 48 || d > 57) break;
      pos++;
    }
    return pos - s;
  };

  // Split in two so that the common case (an integer of at most 15 digits) is small enough to be
  // inlined into the loops that call it.
  const readNumber = (): JsonNumber => {
    const start = pos;
    let p = pos;
    const negative = text.charCodeAt(p) === 0x2d;
    if (negative) p++;
    const first = text.charCodeAt(p);
    // An integer's value is accumulated while its digits are read: exact below 2^53, so for at most
    // 15 digits it is Number(literal) without parsing the literal again.
    let integer = 0;
    if (first === 48) p++;
    else if (first >= 49 && first <= 57) {
      for (;;) {
        const d = text.charCodeAt(p);
        // NaN (past the end) is not a digit either.
        if (!(d >= 48 && d <= 57)) break;
        integer = integer * 10 + (d - 48);
        p++;
      }
    } else return readNumberSlow(start);
    const next = text.charCodeAt(p);
    if (next === 0x2e || next === 0x65 || next === 0x45 || p - start - (negative ? 1 : 0) > 15) return readNumberSlow(start);
    pos = p;
    // -0 is the one such literal that String() does not give back.
    return negative && integer === 0 ? new JsonNumber(text.slice(start, p), -0) : JsonNumber.integer(negative ? -integer : integer);
  };

  const readNumberSlow = (start: number): JsonNumber => {
    pos = start;
    if (text.charCodeAt(pos) === 0x2d) pos++;
    const first = text.charCodeAt(pos);
    if (first === 48) pos++;
    else if (first >= 49 && first <= 57) digitsFrom();
    else fail("syntax", `unexpected ${describe()}`);
    const next = text.charCodeAt(pos);
    const fraction = next === 0x2e;
    if (fraction) {
      pos++;
      if (digitsFrom() === 0) fail("syntax", "digit expected after decimal point");
    }
    const e = text.charCodeAt(pos);
    const exponent = e === 0x65 || e === 0x45;
    if (exponent) {
      pos++;
      const s = text.charCodeAt(pos);
      if (s === 0x2b || s === 0x2d) pos++;
      if (digitsFrom() === 0) fail("syntax", "digit expected in exponent");
    }
    const literal = text.slice(start, pos);
    // Fast path (most literals): no exponent and at most 15 digits breaks no rule (≤ 17
    // characters, no underflow, no exponent) and is short (see shortFloat), so skip the checks.
    if (!exponent && pos - start - (fraction ? 1 : 0) - (literal.charCodeAt(0) === 0x2d ? 1 : 0) <= 15) return new JsonNumber(literal, Number(literal));
    const problem = numberLiteralProblem(literal);
    if (problem !== undefined) fail(problem.rule, problem.message);
    return new JsonNumber(literal);
  };

  const readKey = (): string => {
    skipWs();
    if (text.charCodeAt(pos) !== 0x22) fail("syntax", `object key expected, found ${describe()}`);
    const key = readString();
    skipWs();
    if (text.charCodeAt(pos) !== 0x3a) fail("syntax", `':' expected, found ${describe()}`);
    pos++;
    return key;
  };

  for (;;) {
    // Parse one value at pos, then attach completed values to their parents.
    skipWs();
    if (++nodes > limits.maxNodes) fail("max-nodes", `more than ${limits.maxNodes} nodes`);
    const c = text.charCodeAt(pos);
    let value: JsonValue;
    if (c === 0x5b || c === 0x7b) {
      if (stack.length + 1 > limits.maxDepth) fail("max-depth", `nesting deeper than ${limits.maxDepth}`);
      pos++;
      skipWs();
      if (c === 0x5b) {
        const arr: JsonArray = [];
        if (text.charCodeAt(pos) === 0x5d) {
          pos++;
          value = arr;
        } else {
          stack.push({ arr });
          path.push(0);
          continue;
        }
      } else {
        const map: JsonObject = new Map();
        if (text.charCodeAt(pos) === 0x7d) {
          pos++;
          value = map;
        } else {
          const key = readKey();
          stack.push({ map, key });
          path.push(key);
          continue;
        }
      }
    } else if (c === 0x22) {
      value = readString();
    } else if (c === 0x2d || (c >= 48 && c <= 57)) {
      value = readNumber();
    } else if (text.startsWith("true", pos)) {
      pos += 4;
      value = true;
    } else if (text.startsWith("false", pos)) {
      pos += 5;
      value = false;
    } else if (text.startsWith("null", pos)) {
      pos += 4;
      value = null;
    } else {
      return fail("syntax", `unexpected ${describe()}`);
    }

    let descend = false;
    while (!descend) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        skipWs();
        if (pos < len) fail("trailing-data", `unexpected data after the JSON value at offset ${pos}`, []);
        return value;
      }
      let d = nextChar();
      // Strings and numbers that follow a comma are read in these loops rather than by the dispatch
      // above, with the same checks in the same order (nodes, then the literal): large containers
      // are mostly scalars (4,094 numbers parse ~1.6x faster).
      if (top.arr !== undefined) {
        const arr = top.arr;
        arr.push(value);
        for (;;) {
          if (d === 0x2c) {
            pos++;
            path[path.length - 1] = arr.length;
            const c = nextChar();
            if (c === 0x22 || c === 0x2d || (c >= 48 && c <= 57)) {
              if (++nodes > limits.maxNodes) fail("max-nodes", `more than ${limits.maxNodes} nodes`);
              arr.push(c === 0x22 ? readString() : readNumber());
              d = nextChar();
              continue;
            }
            descend = true;
          } else if (d === 0x5d) {
            pos++;
            stack.pop();
            path.pop();
            value = arr;
          } else {
            fail("syntax", `',' or ']' expected, found ${describe()}`);
          }
          break;
        }
      } else {
        const map = top.map;
        map.set(top.key, value);
        for (;;) {
          if (d === 0x2c) {
            pos++;
            path.pop();
            const key = readKey();
            if (map.has(key)) fail("duplicate-key", "duplicate object key", [...path, key]);
            top.key = key;
            path.push(key);
            const c = nextChar();
            if (c === 0x22 || c === 0x2d || (c >= 48 && c <= 57)) {
              if (++nodes > limits.maxNodes) fail("max-nodes", `more than ${limits.maxNodes} nodes`);
              map.set(key, c === 0x22 ? readString() : readNumber());
              d = nextChar();
              continue;
            }
            descend = true;
          } else if (d === 0x7d) {
            pos++;
            stack.pop();
            path.pop();
            value = map;
          } else {
            fail("syntax", `',' or '}' expected, found ${describe()}`);
          }
          break;
        }
      }
    }
  }
}

/**
 * Parses untrusted JSON text or UTF-8 bytes into an exact tree, or names the JSON pointer and the
 * rule it breaks. Default limits are the value caps.
 */
export function parseJsonSafe(input: string | Uint8Array, limits?: Partial<JsonLimits>): ParseResult {
  const lim: JsonLimits = { ...VALUE_LIMITS, ...limits };
  let text: string;
  if (typeof input === "string") {
    // A UTF-16 unit is at most 3 UTF-8 bytes, so short strings skip the byte count.
    if (input.length * 3 > lim.maxBytes && Buffer.byteLength(input, "utf8") > lim.maxBytes) {
      return { ok: false, error: { pointer: "", rule: "max-bytes", message: `input larger than ${lim.maxBytes} bytes` } };
    }
    text = input;
  } else {
    if (input.byteLength > lim.maxBytes) {
      return { ok: false, error: { pointer: "", rule: "max-bytes", message: `input larger than ${lim.maxBytes} bytes` } };
    }
    try {
      text = decoder.decode(input);
    } catch {
      return { ok: false, error: { pointer: "", rule: "invalid-utf8", message: "input is not valid UTF-8" } };
    }
  }
  try {
    return { ok: true, value: parseText(text, lim) };
  } catch (e) {
    if (e instanceof BoundaryFailure) {
      return { ok: false, error: { pointer: pointerOf(e.at), rule: e.rule, message: e.message } };
    }
    throw e;
  }
}
