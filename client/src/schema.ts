// What `structured({schema})` accepts: a JSON Schema object as is, or a Standard Schema (zod 4, valibot, arktype,
// ...) that can describe itself as JSON Schema (`~standard.jsonSchema`), converted to draft-07, the dialect chatd
// validates. The result type follows the schema: the Standard Schema's output type, or json-schema-to-ts's
// reading of a JSON Schema literal (`as const`, or inline).
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import type { FromSchema, JSONSchema } from "json-schema-to-ts";
import { ChatdSchemaError } from "./errors.ts";

export type JsonSchemaObject = Exclude<JSONSchema, boolean>;
/** A JSON Schema literal types the result; any other object (a schema read from a file) gives `unknown`. */
export type SchemaInput = StandardSchemaV1 | JsonSchemaObject | Record<string, unknown>;

/** The type of a structured request's value for a given schema. */
export type InferSchema<S> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S>
  : S extends JSONSchema ? FromSchema<S> : unknown;

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === "object" && schema !== null && "~standard" in schema;
}

/** The draft-07 JSON Schema chatd receives for `schema`. */
export function toJsonSchema(schema: SchemaInput): Record<string, unknown> {
  if (!isStandardSchema(schema)) {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      throw new ChatdSchemaError("schema must be a JSON Schema object or a Standard Schema", { code: "INVALID_SCHEMA" });
    }
    return schema as Record<string, unknown>;
  }
  const converter = (schema["~standard"] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  if (!converter) {
    throw new ChatdSchemaError(
      `this ${schema["~standard"].vendor} schema cannot describe itself as JSON Schema (Standard JSON Schema); pass a JSON Schema object`,
      { code: "INVALID_SCHEMA" });
  }
  try {
    // `input`: what the schema accepts, which is what the model must produce; validate() then gives the output.
    return converter.input({ target: "draft-07" });
  } catch (error) {
    throw new ChatdSchemaError(`the schema cannot be converted to draft-07 JSON Schema: ${(error as Error).message}`,
      { code: "INVALID_SCHEMA", cause: error });
  }
}

/** Runs a Standard Schema's own validation on the server-validated value (refinements and transforms apply). */
export async function validateWith<S extends StandardSchemaV1>(schema: S, value: unknown): Promise<StandardSchemaV1.InferOutput<S>> {
  const result = await schema["~standard"].validate(value);
  if (result.issues) {
    const validations = result.issues.map((issue) => ({
      field: (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".") || "value",
      detail: issue.message,
    }));
    throw new ChatdSchemaError("the server-validated value fails the schema's own checks on the client", {
      code: "CLIENT_VALIDATION_FAILED", validations,
    });
  }
  return result.value as StandardSchemaV1.InferOutput<S>;
}
