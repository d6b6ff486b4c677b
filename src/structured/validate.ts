// Output validation: boundary parse, exact-aware ajv run, and either the exact canonical value or
// bounded feedback.

import { VALUE_LIMITS } from "./caps.ts";
import { canonicalJson } from "./canonical.ts";
import type { CompiledSchema } from "./compile.ts";
import { withExactData } from "./exact-data.ts";
import { clipErrors, formatFeedback, fromAjvErrors, type ValueError } from "./feedback.ts";
import { parseJsonSafe, type JsonValue } from "./json-boundary.ts";

export type ValidateResult =
  | { ok: true; value: JsonValue; canonicalText: string }
  | { ok: false; errors: ValueError[]; feedback: string };

function failure(errors: ValueError[]): ValidateResult {
  const clipped = clipErrors(errors);
  return { ok: false, errors: clipped, feedback: formatFeedback(clipped) };
}

/** Validates an already parsed exact value (it must have come through parseJsonSafe). */
export function validateParsed(validator: CompiledSchema, value: JsonValue): ValidateResult {
  const valid = withExactData(value, (data) => validator.validate(data));
  if (valid !== true) return failure(fromAjvErrors(validator.validate.errors));
  return { ok: true, value, canonicalText: canonicalJson(value) };
}

export function validateValue(validator: CompiledSchema, valueText: string | Uint8Array): ValidateResult {
  const parsed = parseJsonSafe(valueText, VALUE_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return failure([{ pointer, message: `${rule}: ${message}` }]);
  }
  return validateParsed(validator, parsed.value);
}
