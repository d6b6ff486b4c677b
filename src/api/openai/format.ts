// OpenAI's `json_schema` format as chatd's response_format envelope. `strict` is accepted and dropped: chatd always
// validates the value against the schema on the server, which is stronger than any `strict`. A plain-text answer is
// a request for one JSON string, so every Response has a receipt.
import { validateResponseFormat } from "../../structured/index.ts";
import { invalid, paramFor, type ParamDialect } from "./errors.ts";

export interface JsonSchemaFormat {
  type: "json_schema";
  name: string;
  schema: unknown;
  description?: string;
  strict?: boolean | null;
}

/** The envelope for a plain-text answer: its value is the text, as a JSON string. */
export const TEXT_ENVELOPE = JSON.stringify({ type: "json_schema", json_schema: { name: "text", schema: { type: "string" } } });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The envelope text for a json_schema format (`base` is how the request names it: `text.format` or
 * `response_format.json_schema`), checked by chatd's own validator so that a refusal names the request's field.
 */
export function envelopeFor(format: unknown, base: string, dialect: ParamDialect): string {
  if (!isObject(format)) throw invalid(`${base} must be an object`, base);
  const { strict, ...rest } = format;
  if (strict !== undefined && strict !== null && typeof strict !== "boolean") throw invalid(`${base}.strict must be a boolean`, `${base}.strict`);
  const known = new Set(["type", "name", "schema", "description"]);
  for (const key of Object.keys(rest)) {
    if (!known.has(key)) throw invalid(`Unknown parameter: '${base}.${key}'.`, `${base}.${key}`, "unknown_parameter");
  }
  const { type: _type, ...jsonSchema } = rest;
  const text = JSON.stringify({ type: "json_schema", json_schema: jsonSchema });
  const checked = validateResponseFormat(text);
  if (!checked.ok) {
    const first = checked.errors[0]!;
    throw invalid(`${paramFor(first.field, dialect) ?? base} ${first.detail}`, paramFor(first.field, dialect), "invalid_response_format");
  }
  return text;
}
