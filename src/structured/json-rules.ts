// The boundary's rules that are decided outside the parse loop: a number literal's length and range,
// and the depth and node limits of a value that was parsed as part of a larger document.

import { NUMBER_MAX_EXPONENT, NUMBER_MAX_LITERAL_LENGTH, type JsonLimits } from "./caps.ts";
import { splitLiteral } from "./decimal.ts";
import { JsonNumber, pointerOf, type JsonArray, type JsonObject, type JsonValue } from "./json-value.ts";

export type BoundaryRule =
  | "syntax"
  | "trailing-data"
  | "invalid-utf8"
  | "unpaired-surrogate"
  | "nul-character"
  | "control-character"
  | "duplicate-key"
  | "number-too-long"
  | "number-range"
  | "max-bytes"
  | "max-depth"
  | "max-nodes";

export interface BoundaryError {
  pointer: string;
  rule: BoundaryRule;
  message: string;
}

/** Returns the rule a number literal breaks, if any (length, float64 range, exponent bound). */
export function numberLiteralProblem(text: string): { rule: BoundaryRule; message: string } | undefined {
  if (text.length > NUMBER_MAX_LITERAL_LENGTH) {
    return { rule: "number-too-long", message: `number literal longer than ${NUMBER_MAX_LITERAL_LENGTH} characters` };
  }
  const parts = splitLiteral(text);
  if (parts === undefined) return { rule: "syntax", message: "invalid number literal" };
  const asFloat = Number(text);
  if (!Number.isFinite(asFloat)) return { rule: "number-range", message: "number outside float64's finite range" };
  if (asFloat === 0 && /[1-9]/.test(parts.int + parts.frac)) {
    return { rule: "number-range", message: "non-zero number underflows float64" };
  }
  if (Math.abs(parts.exp) > NUMBER_MAX_EXPONENT) {
    return { rule: "number-range", message: `exponent beyond ±${NUMBER_MAX_EXPONENT}` };
  }
  // jsonb stores numbers written out in full (1e64 comes back as 1 followed by 64 zeros). Values
  // read back from the database pass this same boundary, so the written-out form obeys the cap too.
  if (fullLength(parts) > NUMBER_MAX_LITERAL_LENGTH) {
    return { rule: "number-too-long", message: `number longer than ${NUMBER_MAX_LITERAL_LENGTH} characters when written without exponent` };
  }
  return undefined;
}

/** Length of pgNumericText(literal) without building it (the exponent may be large). */
function fullLength(p: { neg: boolean; int: string; frac: string; exp: number }): number {
  const digits = (p.int + p.frac).replace(/^0+/, "").length;
  const k = p.exp - p.frac.length;
  if (digits === 0) return k >= 0 ? 1 : 2 - k;
  const body = k >= 0 ? digits + k : Math.max(digits, -k + 1) + 1;
  return body + (p.neg ? 1 : 0);
}

function withinLimits(value: JsonValue, limits: Pick<JsonLimits, "maxDepth" | "maxNodes">): boolean {
  let nodes = 0;
  // Scalar items are counted in the loops (no call per item: large arrays are mostly scalars).
  const fits = (v: JsonArray | JsonObject, depth: number): boolean => {
    if (++nodes > limits.maxNodes || depth >= limits.maxDepth) return false;
    const item = (x: JsonValue): boolean => (Array.isArray(x) || x instanceof Map ? fits(x, depth + 1) : ++nodes <= limits.maxNodes);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i] ?? null;
        if (x instanceof JsonNumber || typeof x === "string" ? ++nodes > limits.maxNodes : !item(x)) return false;
      }
    } else {
      for (const x of v.values()) if (!item(x)) return false;
    }
    return true;
  };
  return Array.isArray(value) || value instanceof Map ? fits(value, 0) : limits.maxNodes >= 1;
}

/**
 * The depth or node rule an already parsed value breaks, with the pointer and message parseJsonSafe
 * would give for its text alone (nodes counted in document order, containers before their items), for
 * values that were parsed as part of a larger document.
 */
export function limitError(value: JsonValue, limits: Pick<JsonLimits, "maxDepth" | "maxNodes">): BoundaryError | undefined {
  // Nearly every value is within its limits: count without tracking a path first (~10x cheaper).
  if (withinLimits(value, limits)) return undefined;
  let nodes = 0;
  const path: (string | number)[] = [];
  const visit = (v: JsonValue, depth: number): BoundaryError | undefined => {
    if (++nodes > limits.maxNodes) return { pointer: pointerOf(path), rule: "max-nodes", message: `more than ${limits.maxNodes} nodes` };
    if (!Array.isArray(v) && !(v instanceof Map)) return undefined;
    if (depth + 1 > limits.maxDepth) return { pointer: pointerOf(path), rule: "max-depth", message: `nesting deeper than ${limits.maxDepth}` };
    const entries: Iterable<[string | number, JsonValue]> = Array.isArray(v) ? v.entries() : v.entries();
    for (const [k, x] of entries) {
      path.push(k);
      const e = visit(x, depth + 1);
      path.pop();
      if (e !== undefined) return e;
    }
    return undefined;
  };
  return visit(value, 0);
}
