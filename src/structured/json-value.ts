// The values the JSON boundary (json-boundary.ts) produces: exact numbers, Map objects that keep keys
// as written, and the JSON pointers that name a place in them.

import { parseDecimal, shortFloat, type Decimal } from "./decimal.ts";

const UNKNOWN = Symbol("unknown");
// The text JsonNumber.integer passes: no literal is empty, so no caller's text is this one.
const LAZY_INTEGER = "";

/** A number kept as its exact literal text. */
export class JsonNumber {
  // Private fields (invisible to deep equality: compare numbers by `text`, trees by jsonEquals).
  #text: string | undefined;
  // Both derived from `text` once, on first use.
  #short: number | undefined | typeof UNKNOWN;
  #decimal: Decimal | undefined;
  /** `short` is a hint from the parser, which already knows (see shortFloat). */
  constructor(text: string, short?: number) {
    this.#text = text === LAZY_INTEGER ? undefined : text;
    this.#short = short ?? UNKNOWN;
  }
  /**
   * The parser's integer literals of at most 15 digits, except `-0`: the literal is exactly
   * String(value), so the text is made only if asked for. A number array's values are seldom
   * asked for their text (only when stored), and slicing 4,094 literals was ~15% of its parse.
   */
  static integer(value: number): JsonNumber {
    // Through the constructor alone: writing #text again afterwards was ~10% of a number array's parse.
    return new JsonNumber(LAZY_INTEGER, value);
  }
  /** integer()'s value while its text has not been made (the text is then String(value)), else undefined. */
  get lazyInteger(): number | undefined {
    return this.#text === undefined && typeof this.#short === "number" ? this.#short : undefined;
  }
  /** The literal as written (for integer(): String(value), the same characters). */
  get text(): string {
    return (this.#text ??= String(this.#short));
  }
  /**
   * The float when it is exact enough to decide order, equality and integer-ness (decimal.ts
   * `shortFloat`: zero, or ≤ 15 significant digits in the normal range), else undefined. The exact
   * keywords decide on it without touching BigInt; most literals in practice qualify.
   */
  get short(): number | undefined {
    if (this.#short === UNKNOWN) this.#short = shortFloat(this.text);
    return this.#short;
  }
  /** The exact value, parsed once (several keywords and branches may ask). */
  get decimal(): Decimal {
    return (this.#decimal ??= parseDecimal(this.text));
  }
}

export type JsonObject = Map<string, JsonValue>;
export type JsonArray = JsonValue[];
export type JsonValue = null | boolean | string | JsonNumber | JsonArray | JsonObject;

export function escapePointerSegment(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function pointerOf(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) out += "/" + (typeof seg === "number" ? String(seg) : escapePointerSegment(seg));
  return out;
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof Map;
}

export function isJsonNumber(v: JsonValue | undefined): v is JsonNumber {
  return v instanceof JsonNumber;
}
