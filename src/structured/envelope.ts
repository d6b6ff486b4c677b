// The response_format envelope. The shape rules here are mirrored by
// a PL/pgSQL function; both run test/fixtures/response-format-envelope.json. Checks run in a fixed
// order and stop at the first failure, so the reported field is deterministic on both sides. Unknown
// keys are reported in jsonb key order (what the SQL side iterates).

import { ENVELOPE_LIMITS } from "./caps.ts";
import { sortedKeys } from "./canonical.ts";
import { isJsonObject, parseJsonSafe, type JsonObject, type JsonValue } from "./json-boundary.ts";

export interface FieldError {
  field: string;
  detail: string;
}

export type EnvelopeResult =
  | { ok: true; format: { type: "text" } }
  | { ok: true; format: { type: "json_schema"; name: string; description?: string; schema: JsonObject } }
  | { ok: false; errors: FieldError[] };

export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const DESCRIPTION_MAX_BYTES = 1024;

const ROOT = "response_format";
const JS = "response_format.json_schema";

/** Maps a JSON pointer inside the envelope to the envelope field it falls under. */
export function fieldForPointer(pointer: string): string {
  const segs = pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [a, b] = segs;
  if (a === undefined) return ROOT;
  if (a !== "json_schema") return `${ROOT}.${a}`;
  if (b === undefined) return JS;
  return `${JS}.${b}`;
}

function describeType(v: JsonValue | undefined): string {
  if (v === undefined) return "missing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (isJsonObject(v)) return "an object";
  return typeof v === "object" ? "a number" : `a ${typeof v}`;
}

function unknownKey(obj: JsonObject, allowed: readonly string[]): string | undefined {
  return sortedKeys(obj.keys()).find((k) => !allowed.includes(k));
}

function fail(field: string, detail: string): EnvelopeResult {
  return { ok: false, errors: [{ field, detail }] };
}

export function checkEnvelopeValue(env: JsonValue): EnvelopeResult {
  if (!isJsonObject(env)) return fail(ROOT, `must be an object, got ${describeType(env)}`);
  const type = env.get("type");
  if (type === undefined) return fail(`${ROOT}.type`, "is required");
  if (type !== "text" && type !== "json_schema") {
    return fail(`${ROOT}.type`, typeof type === "string" ? 'must be "text" or "json_schema"' : `must be a string, got ${describeType(type)}`);
  }
  const extra = unknownKey(env, ["type", "json_schema"]);
  if (extra !== undefined) return fail(`${ROOT}.${extra}`, "unknown field");
  if (type === "text") {
    if (env.has("json_schema")) return fail(JS, 'not allowed with type "text"');
    return { ok: true, format: { type: "text" } };
  }
  const js = env.get("json_schema");
  if (js === undefined) return fail(JS, 'is required with type "json_schema"');
  if (!isJsonObject(js)) return fail(JS, `must be an object, got ${describeType(js)}`);
  const extraJs = unknownKey(js, ["name", "description", "schema"]);
  if (extraJs !== undefined) return fail(`${JS}.${extraJs}`, "unknown field");
  const name = js.get("name");
  if (name === undefined) return fail(`${JS}.name`, "is required");
  if (typeof name !== "string") return fail(`${JS}.name`, `must be a string, got ${describeType(name)}`);
  if (!NAME_PATTERN.test(name)) return fail(`${JS}.name`, "must match ^[A-Za-z0-9_-]{1,64}$");
  const description = js.get("description");
  if (description !== undefined) {
    if (typeof description !== "string") {
      return fail(`${JS}.description`, `must be a string, got ${describeType(description)}`);
    }
    if (Buffer.byteLength(description, "utf8") > DESCRIPTION_MAX_BYTES) {
      return fail(`${JS}.description`, `must be at most ${DESCRIPTION_MAX_BYTES} UTF-8 bytes`);
    }
  }
  const schema = js.get("schema");
  if (schema === undefined) return fail(`${JS}.schema`, "is required");
  if (!isJsonObject(schema)) return fail(`${JS}.schema`, `must be an object, got ${describeType(schema)}`);
  return {
    ok: true,
    format: description === undefined ? { type: "json_schema", name, schema } : { type: "json_schema", name, description, schema },
  };
}

/** JSON boundary plus envelope shape; schema content is checked by the caller. */
export function checkEnvelope(text: string | Uint8Array): EnvelopeResult {
  const parsed = parseJsonSafe(text, ENVELOPE_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return fail(fieldForPointer(pointer), `${rule}: ${message}${pointer === "" ? "" : ` at ${pointer}`}`);
  }
  return checkEnvelopeValue(parsed.value);
}
