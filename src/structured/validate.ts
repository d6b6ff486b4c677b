// Output validation: boundary parse, exact-aware ajv run, and either the exact canonical value or
// bounded feedback.

import { VALUE_INPUT_LIMITS, VALUE_MAX_BYTES } from "./caps.ts";
import { canonicalJson, storedByteLength } from "./canonical.ts";
import type { CompiledSchema } from "./compile.ts";
import { withExactData } from "./exact-data.ts";
import { clipErrors, formatFeedback, fromAjvErrors, type ValueError } from "./feedback.ts";
import { JsonNumber, parseJsonSafe, type JsonValue } from "./json-boundary.ts";

export type ValidateResult =
  | { ok: true; value: JsonValue; canonicalText: string }
  /** `rule` is set when the value broke a cap after parsing (its stored size), not the schema. */
  | { ok: false; errors: ValueError[]; feedback: string; rule?: "max-bytes" };

function failure(errors: ValueError[], rule?: "max-bytes"): ValidateResult {
  const clipped = clipErrors(errors);
  return rule === undefined ? { ok: false, errors: clipped, feedback: formatFeedback(clipped) } : { ok: false, errors: clipped, feedback: formatFeedback(clipped), rule };
}

/** Whether a literal is written differently, and longer, in the stored text (an exponent written out). */
function expands(n: JsonNumber): boolean {
  return /[eE]/.test(n.text) && canonicalJson(n).length > n.text.length;
}

function hasExpandingNumber(v: JsonValue): boolean {
  if (v instanceof JsonNumber) return expands(v);
  if (Array.isArray(v)) return v.some(hasExpandingNumber);
  if (v instanceof Map) for (const x of v.values()) if (hasExpandingNumber(x)) return true;
  return false;
}

/**
 * The byte cap applies to the stored text (canonicalText = `jsonb::text`, exactly what `valueJson`
 * returns), which can be longer than what was sent: `1e60` is stored as 61 digits, and every `,` and
 * `:` is followed by a space. The message says so, so that the model can shorten the value.
 */
function storedSizeError(value: JsonValue, bytes: number): ValueError | undefined {
  if (bytes <= VALUE_MAX_BYTES) return undefined;
  const why = hasExpandingNumber(value)
    ? "numbers are stored without exponent (1e60 takes 61 characters): write them out shorter or send fewer"
    : "the stored text puts a space after every comma and colon: send a smaller value";
  return { pointer: "", message: `max-bytes: the value is ${bytes} bytes as stored, more than ${VALUE_MAX_BYTES}; ${why}` };
}

/** Validates an already parsed exact value (it must have come through parseJsonSafe). */
export function validateParsed(validator: CompiledSchema, value: JsonValue): ValidateResult {
  const valid = withExactData(value, (data) => validator.validate(data), validator.propertyReads);
  if (valid !== true) return failure(fromAjvErrors(validator.validate.errors));
  const canonicalText = canonicalJson(value);
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts skip the count.
  const tooLarge = canonicalText.length * 3 <= VALUE_MAX_BYTES ? undefined : storedSizeError(value, Buffer.byteLength(canonicalText, "utf8"));
  if (tooLarge !== undefined) return failure([tooLarge], "max-bytes");
  return { ok: true, value, canonicalText };
}

export type CheckResult = { ok: true } | Extract<ValidateResult, { ok: false }>;

/**
 * validateParsed's verdict without the stored text (its size is computed, not the text): for callers
 * that only report the verdict (`chatd schema validate`). Same checks, same errors.
 */
export function checkParsed(validator: CompiledSchema, value: JsonValue): CheckResult {
  const valid = withExactData(value, (data) => validator.validate(data), validator.propertyReads);
  if (valid !== true) return failure(fromAjvErrors(validator.validate.errors)) as CheckResult;
  const tooLarge = storedSizeError(value, storedByteLength(value));
  return tooLarge === undefined ? { ok: true } : failure([tooLarge], "max-bytes") as CheckResult;
}

/** checkParsed on a value's text (through the boundary, as validateValue). */
export function checkValue(validator: CompiledSchema, valueText: string | Uint8Array): CheckResult {
  const parsed = parseJsonSafe(valueText, VALUE_INPUT_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return failure([{ pointer, message: `${rule}: ${message}` }]) as CheckResult;
  }
  return checkParsed(validator, parsed.value);
}

export function validateValue(validator: CompiledSchema, valueText: string | Uint8Array): ValidateResult {
  const parsed = parseJsonSafe(valueText, VALUE_INPUT_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return failure([{ pointer, message: `${rule}: ${message}` }]);
  }
  return validateParsed(validator, parsed.value);
}
