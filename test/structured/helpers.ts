import { compileSchema, parseJsonSafe, SCHEMA_LIMITS, type CompiledSchema, type JsonValue } from "../../src/structured/index.ts";

export function parse(text: string): JsonValue {
  const r = parseJsonSafe(text, SCHEMA_LIMITS);
  if (!r.ok) throw new Error(`${r.error.rule} at ${r.error.pointer}: ${r.error.message}`);
  return r.value;
}

export function compile(schemaText: string): CompiledSchema {
  const r = compileSchema(parse(schemaText));
  if (!r.ok) throw new Error(`schema rejected: ${JSON.stringify(r.errors)}`);
  return r.validator;
}

export function schemaErrors(schemaText: string): { field: string; detail: string }[] {
  const r = compileSchema(parse(schemaText));
  return r.ok ? [] : r.errors;
}
