// Public API of src/structured. A pure library: no database, no
// provider code, no network or filesystem access.

import { compileSchema } from "./compile.ts";
import { checkEnvelope, type FieldError } from "./envelope.ts";
import type { JsonValue } from "./json-boundary.ts";

export * from "./caps.ts";
export { JsonNumber, limitError, parseJsonSafe, type BoundaryError, type BoundaryRule, type JsonArray, type JsonObject, type JsonValue, type ParseResult } from "./json-boundary.ts";
export { canonicalJson, compactJson, storedByteLength, jsonEquals, sha256Hex } from "./canonical.ts";
export { compareDecimal, decimalKey, isIntegerDecimal, isMultipleOf, parseDecimal, pgNumericText, type Decimal } from "./decimal.ts";
export { NAME_PATTERN, type FieldError } from "./envelope.ts";
export { cachedValidator, compileSchema, compileCacheStats, type CompiledSchema, type CompileResult } from "./compile.ts";
export { checkParsed, checkValue, validateValue, type CheckResult, type ValidateResult } from "./validate.ts";
export { formatFeedback, type ValueError } from "./feedback.ts";
export type { FormatName } from "./formats.ts";

export const SCHEMA_FIELD = "response_format.json_schema.schema";

export type ResponseFormat =
  | { type: "text" }
  | {
      type: "json_schema";
      name: string;
      description?: string;
      schema: JsonValue;
      /** PostgreSQL `jsonb::text` of the schema. */
      schemaText: string;
      /** SHA-256 hex of schemaText (UTF-8), equal to SQL's sha256 of `schema::text`. */
      schemaSha256: string;
    };

export type ResponseFormatResult = { ok: true; format: ResponseFormat } | { ok: false; errors: FieldError[] };

/** Full admission check: JSON boundary, envelope, schema screening, caps and compile. */
export function validateResponseFormat(text: string | Uint8Array): ResponseFormatResult {
  const env = checkEnvelope(text);
  if (!env.ok) return env;
  if (env.format.type === "text") return { ok: true, format: { type: "text" } };
  const { name, description, schema } = env.format;
  const compiled = compileSchema(schema);
  if (!compiled.ok) {
    return {
      ok: false,
      errors: compiled.errors.map((e) => ({ field: SCHEMA_FIELD, detail: `${e.field === "" ? "" : `at ${e.field}: `}${e.detail}` })),
    };
  }
  const { schemaText, sha256 } = compiled.validator;
  const format: ResponseFormat =
    description === undefined
      ? { type: "json_schema", name, schema, schemaText, schemaSha256: sha256 }
      : { type: "json_schema", name, description, schema, schemaText, schemaSha256: sha256 };
  return { ok: true, format };
}

export { isJsonObject as isJsonObjectValue } from "./json-boundary.ts";
