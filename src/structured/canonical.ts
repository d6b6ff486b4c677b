// Canonical text: exactly what PostgreSQL prints for `jsonb::text`, so that the schema hash computed
// here equals `sha256(schema::text)` in SQL and values go to jsonb without passing through float64.

import { createHash } from "node:crypto";
import { decimalKey, pgNumericText } from "./decimal.ts";
import { JsonNumber, type JsonValue } from "./json-boundary.ts";

// PostgreSQL's escape_json: the short escapes, \u00XX (lowercase hex) for other C0 controls,
// everything else (DEL, U+2028, '/', non-ASCII) verbatim.
function pgString(s: string): string {
  // For well-formed text JSON.stringify escapes exactly the same characters the same way (short
  // escapes, lowercase \u00xx for other C0 controls, nothing else) and is native.
  if (s.isWellFormed()) return JSON.stringify(s);
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(start, i);
    start = i + 1;
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += "\\\\"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      default: out += "\\u" + c.toString(16).padStart(4, "0");
    }
  }
  return out + s.slice(start) + '"';
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

function compareAscii(x: string, y: string): number {
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}

// Many ASCII keys: group by length, then sort each group by code units. Same order as compareAscii,
// with fewer and cheaper comparisons: 4,095 keys with long shared prefixes took ~1.8 ms, now ~1.1 ms.
function sortAsciiByLength(list: string[]): string[] {
  const byLength = new Map<number, string[]>();
  for (const k of list) {
    const group = byLength.get(k.length);
    if (group === undefined) byLength.set(k.length, [k]);
    else group.push(k);
  }
  const out: string[] = [];
  for (const length of [...byLength.keys()].sort((a, b) => a - b)) {
    const group = byLength.get(length) ?? [];
    // The default sort compares strings by UTF-16 code units, which is `<`.
    if (group.length > 1) group.sort();
    for (const k of group) out.push(k);
  }
  return out;
}

/** jsonb key order: shorter UTF-8 byte length first, then bytewise. */
export function sortedKeys(keys: Iterable<string>): string[] {
  const list = [...keys];
  // ASCII keys (nearly all): UTF-8 length is the string length and bytewise order is code unit
  // order, so no Buffer per key (4,095 keys: ~4 ms -> ~1 ms).
  if (list.every(isAscii)) return list.length > 64 ? sortAsciiByLength(list) : list.sort(compareAscii);
  const withBytes = list.map((k) => ({ k, b: Buffer.from(k, "utf8") }));
  withBytes.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  return withBytes.map((e) => e.k);
}

// A literal without exponent is already written out the way numeric prints it, except that a
// negative zero loses its sign; skipping pgNumericText there halves canonical time for number arrays.
function numericText(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x65 || c === 0x45) return pgNumericText(text);
  }
  return text.charCodeAt(0) === 0x2d && !/[1-9]/.test(text) ? text.slice(1) : text;
}

export function canonicalJson(v: JsonValue): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return pgString(v);
  if (v instanceof JsonNumber) return numericText(v.text);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(", ")}]`;
  const parts: string[] = [];
  for (const k of sortedKeys(v.keys())) parts.push(`${pgString(k)}: ${canonicalJson(v.get(k) ?? null)}`);
  return `{${parts.join(", ")}}`;
}

// Printable ASCII but `"` and `\`: written as is, one byte per character. (A native regex test is
// ~2x faster than a charCodeAt loop over the 4,095 keys of the bench's patternProperties value.)
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

// UTF-8 bytes of pgString(s) without building it: a string without escapes or non-ASCII (nearly all)
// is its length plus the quotes.
function storedStringBytes(s: string): number {
  return PLAIN_ASCII.test(s) ? s.length + 2 : Buffer.byteLength(pgString(s), "utf8");
}

/** Characters of String(x) for an integer |x| < 1e15 (powers of ten are exact doubles up to 1e22). */
function integerLength(x: number): number {
  const a = x < 0 ? -x : x;
  // Comparisons only (no division or loop): called once per integer of a value, 4,094 in the bench's arrays.
  const digits = a < 1e4 ? (a < 10 ? 1 : a < 100 ? 2 : a < 1e3 ? 3 : 4)
    : a < 1e8 ? (a < 1e5 ? 5 : a < 1e6 ? 6 : a < 1e7 ? 7 : 8)
    : a < 1e12 ? (a < 1e9 ? 9 : a < 1e10 ? 10 : a < 1e11 ? 11 : 12)
    : a < 1e13 ? 13 : a < 1e14 ? 14 : 15;
  return x < 0 ? digits + 1 : digits;
}

/** storedByteLength of a number. */
function storedNumberBytes(v: JsonNumber): number {
  // An integer of at most 15 digits is stored as written: count its digits without making its text.
  const int = v.lazyInteger;
  return int === undefined ? numericText(v.text).length : integerLength(int);
}

/**
 * Buffer.byteLength(canonicalJson(v)) without building the text or sorting keys (order does not
 * change the length): for callers that need the stored size but not the text.
 */
export function storedByteLength(v: JsonValue): number {
  if (v === null || v === true) return 4;
  if (v === false) return 5;
  if (typeof v === "string") return storedStringBytes(v);
  if (v instanceof JsonNumber) return storedNumberBytes(v);
  if (Array.isArray(v)) {
    let n = v.length === 0 ? 2 : 2 * v.length;
    // Numbers counted in the loop (no call per item: large arrays are mostly numbers).
    for (let i = 0; i < v.length; i++) {
      const x = v[i] ?? null;
      n += x instanceof JsonNumber ? storedNumberBytes(x) : storedByteLength(x);
    }
    return n;
  }
  // {"k": v, …}: braces, and per entry the key, ": " and ", " (one separator fewer than entries).
  let n = v.size === 0 ? 2 : 4 * v.size;
  for (const [k, x] of v) n += storedStringBytes(k) + storedByteLength(x);
  return n;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * A key equal exactly when two values are equal as JSON Schema defines it (numbers by exact value,
 * objects regardless of key order). Used for const, enum and uniqueItems.
 */
export function equalityKey(v: JsonValue): string {
  if (v === null || typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof JsonNumber) return numberKey(v);
  if (Array.isArray(v)) return `[${v.map(equalityKey).join(",")}]`;
  const parts: string[] = [];
  for (const k of sortedKeys(v.keys())) parts.push(`${JSON.stringify(k)}:${equalityKey(v.get(k) ?? null)}`);
  return `{${parts.join(",")}}`;
}

/**
 * equalityKey of a number whose float is exact (JsonNumber.short). Distinct short values have
 * distinct floats and String() tells floats apart (0 and -0 both print "0", and are equal), so this
 * is exact; the "%" prefix keeps it apart from the "#" keys of the other numbers, whose values a
 * short number never has (shortness depends on the value only).
 */
export function floatKey(x: number): string {
  return `%${x}`;
}

export function numberKey(n: JsonNumber): string {
  const f = n.short;
  return f !== undefined ? floatKey(f) : `#${decimalKey(n.decimal)}`;
}

/** Deep equality on exact trees. */
export function jsonEquals(a: JsonValue, b: JsonValue): boolean {
  return equalityKey(a) === equalityKey(b);
}

/** Compact JSON with the original key order and number literals (not normalized). */
export function compactJson(v: JsonValue): string {
  if (v === null || typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (v instanceof JsonNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(compactJson).join(",")}]`;
  const parts: string[] = [];
  for (const [k, x] of v) parts.push(`${JSON.stringify(k)}:${compactJson(x)}`);
  return `{${parts.join(",")}}`;
}
