// Canonical text: exactly what PostgreSQL prints for `jsonb::text`, so that the schema hash computed
// here equals `sha256(schema::text)` in SQL and values go to jsonb without passing through float64.

import { createHash } from "node:crypto";
import { pgNumericText, decimalKey, parseDecimal } from "./decimal.ts";
import { JsonNumber, type JsonValue } from "./json-boundary.ts";

// PostgreSQL's escape_json: the short escapes, \u00XX (lowercase hex) for other C0 controls,
// everything else (DEL, U+2028, '/', non-ASCII) verbatim.
function pgString(s: string): string {
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

/** jsonb key order: shorter UTF-8 byte length first, then bytewise. */
export function sortedKeys(keys: Iterable<string>): string[] {
  const withBytes = [...keys].map((k) => ({ k, b: Buffer.from(k, "utf8") }));
  withBytes.sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b));
  return withBytes.map((e) => e.k);
}

export function canonicalJson(v: JsonValue): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return pgString(v);
  if (v instanceof JsonNumber) return pgNumericText(v.text);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(", ")}]`;
  const parts: string[] = [];
  for (const k of sortedKeys(v.keys())) parts.push(`${pgString(k)}: ${canonicalJson(v.get(k) ?? null)}`);
  return `{${parts.join(", ")}}`;
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
  if (v instanceof JsonNumber) return `#${decimalKey(parseDecimal(v.text))}`;
  if (Array.isArray(v)) return `[${v.map(equalityKey).join(",")}]`;
  const parts: string[] = [];
  for (const k of sortedKeys(v.keys())) parts.push(`${JSON.stringify(k)}:${equalityKey(v.get(k) ?? null)}`);
  return `{${parts.join(",")}}`;
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
