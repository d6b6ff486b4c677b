// ajv compilation: draft-07, strict, fail-fast, no $data, no loading, RE2 patterns, our formats,
// exact numeric keywords, and a bounded cache keyed by the schema's SHA-256.
//
// Each cached schema gets its own Ajv instance: ajv keeps every compiled schema for the life of
// its instance, so dropping the instance (and clearing it with removeSchema on eviction) is what
// actually returns the memory. Meta-validation uses one shared instance that only ever holds the
// bundled draft-07 meta-schema.

import { Ajv, type ErrorObject, type KeywordDefinition, type ValidateFunction } from "ajv";
import type { DataValidateFunction, RegExpEngine } from "ajv/dist/types/index.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };
import { RE2JS } from "re2js";
import { COMPILE_CACHE_SIZE, SCHEMA_MAX_BYTES } from "./caps.ts";
import { canonicalJson, equalityKey, sha256Hex } from "./canonical.ts";
import { compareDecimal, isIntegerDecimal, isMultipleOf, parseDecimal, type Decimal } from "./decimal.ts";
import { exactAt, type DataContext } from "./exact-data.ts";
import { FORMAT_CHECKS, SUPPORTED_FORMATS } from "./formats.ts";
import { isJsonNumber, isJsonObject, type JsonNumber, type JsonValue } from "./json-boundary.ts";
import { screenSchema, toPlain, type SchemaError } from "./schema-screen.ts";

export interface CompiledSchema {
  readonly sha256: string;
  /** Canonical text (PostgreSQL `jsonb::text`) of the schema. */
  readonly schemaText: string;
  readonly schema: JsonValue;
  /** @internal */
  readonly validate: ValidateFunction;
  /** @internal the instance owning `validate`; cleared when evicted from the cache. */
  readonly ajv: Ajv;
}

export type CompileResult = { ok: true; validator: CompiledSchema } | { ok: false; errors: { field: string; detail: string }[] };

const re2Engine = ((pattern: string) => RE2JS.compile(RE2JS.translateRegExp(pattern))) as unknown as RegExpEngine;
// Only used by ajv's standalone code generation, which we never run.
re2Engine.code = "re2js";

type Check = (data: unknown, cxt: DataContext | undefined) => string | undefined;

function exactKeyword(keyword: string, schemaType: "string" | "boolean" | "array", make: (schema: unknown) => Check): KeywordDefinition {
  return {
    keyword,
    schemaType,
    errors: true,
    compile(schema: unknown) {
      const check = make(schema);
      const fn = ((data: unknown, cxt?: DataContext) => {
        const message = check(data, cxt);
        if (message === undefined) return true;
        fn.errors = [{ keyword, message, params: {} }];
        return false;
      }) as DataValidateFunction;
      return fn;
    },
  };
}

// A value checked by several branches is parsed to a Decimal once.
const decimals = new WeakMap<JsonNumber, Decimal>();

function numberAt(data: unknown, cxt: DataContext | undefined): Decimal | undefined {
  if (typeof data !== "number") return undefined;
  const exact = exactAt(data, cxt);
  if (!isJsonNumber(exact)) throw new Error("number without exact literal");
  let d = decimals.get(exact);
  if (d === undefined) {
    d = parseDecimal(exact.text);
    decimals.set(exact, d);
  }
  return d;
}

function bound(keyword: string, op: string, ok: (cmp: number) => boolean): KeywordDefinition {
  return exactKeyword(keyword, "string", (schema) => {
    const limit = parseDecimal(String(schema));
    const message = `must be ${op} ${String(schema)}`;
    return (data, cxt) => {
      const x = numberAt(data, cxt);
      return x === undefined || ok(compareDecimal(x, limit)) ? undefined : message;
    };
  });
}

const EXACT_KEYWORD_DEFS: readonly KeywordDefinition[] = [
  bound("chatdMinimum", ">=", (c) => c >= 0),
  bound("chatdMaximum", "<=", (c) => c <= 0),
  bound("chatdExclusiveMinimum", ">", (c) => c > 0),
  bound("chatdExclusiveMaximum", "<", (c) => c < 0),
  exactKeyword("chatdMultipleOf", "string", (schema) => {
    const d = parseDecimal(String(schema));
    const message = `must be multiple of ${String(schema)}`;
    return (data, cxt) => {
      const x = numberAt(data, cxt);
      return x === undefined || isMultipleOf(x, d) ? undefined : message;
    };
  }),
  exactKeyword("chatdInteger", "boolean", () => (data, cxt) => {
    const x = numberAt(data, cxt);
    return x === undefined || isIntegerDecimal(x) ? undefined : "must be integer";
  }),
  exactKeyword("chatdConst", "string", (schema) => (data, cxt) =>
    equalityKey(exactAt(data, cxt)) === schema ? undefined : "must be equal to constant",
  ),
  exactKeyword("chatdEnum", "array", (schema) => {
    const allowed = new Set(schema as string[]);
    return (data, cxt) => (allowed.has(equalityKey(exactAt(data, cxt))) ? undefined : "must be equal to one of the allowed values");
  }),
  exactKeyword("chatdUniqueItems", "boolean", () => (data, cxt) => {
    if (!Array.isArray(data)) return undefined;
    const exact = exactAt(data, cxt);
    if (!Array.isArray(exact)) throw new Error("array without exact value");
    const seen = new Map<string, number>();
    for (let i = 0; i < exact.length; i++) {
      const key = equalityKey(exact[i] ?? null);
      const j = seen.get(key);
      if (j !== undefined) return `must NOT have duplicate items (items ## ${j} and ${i} are identical)`;
      seen.set(key, i);
    }
    return undefined;
  }),
];

const metaAjv = new Ajv({ strict: false, validateFormats: false, logger: false, allErrors: false });
const validateDraft07 = metaAjv.compile(draft07);

function newAjv(): Ajv {
  const ajv = new Ajv({
    strictSchema: true,
    strictNumbers: true,
    // Off: they reject ordinary draft-07 schemas (keywords without an explicit type, open tuples).
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: false,
    $data: false,
    meta: false,
    validateSchema: false,
    addUsedSchema: false,
    inlineRefs: true,
    logger: false,
    code: { regExp: re2Engine },
  });
  for (const name of SUPPORTED_FORMATS) ajv.addFormat(name, { type: "string", validate: FORMAT_CHECKS[name] });
  for (const def of EXACT_KEYWORD_DEFS) ajv.addKeyword(def);
  return ajv;
}

function metaErrors(errors: ErrorObject[] | null | undefined): { field: string; detail: string }[] {
  const e = errors?.[0];
  if (e === undefined) return [{ field: "", detail: "schema does not match the draft-07 meta-schema" }];
  return [{ field: e.instancePath, detail: `${e.message ?? "invalid"} (draft-07 meta-schema)` }];
}

const cache = new Map<string, CompiledSchema>();
let evictions = 0;

function remember(c: CompiledSchema): void {
  cache.set(c.sha256, c);
  while (cache.size > COMPILE_CACHE_SIZE) {
    const oldest = cache.keys().next();
    if (oldest.done === true) break;
    const victim = cache.get(oldest.value);
    cache.delete(oldest.value);
    // Validators already handed out keep working (their code is self-contained); the instance's
    // schema registry is emptied so nothing else stays reachable through it.
    victim?.ajv.removeSchema();
    evictions++;
  }
}

/** Screening + caps + meta-validation + compile. Errors name a JSON pointer into the schema. */
export function compileSchema(schema: JsonValue): CompileResult {
  if (!isJsonObject(schema)) return { ok: false, errors: [{ field: "", detail: "the schema document must be an object" }] };
  const schemaText = canonicalJson(schema);
  const bytes = Buffer.byteLength(schemaText, "utf8");
  if (bytes > SCHEMA_MAX_BYTES) {
    return { ok: false, errors: [{ field: "", detail: `schema larger than ${SCHEMA_MAX_BYTES} bytes (canonical text is ${bytes})` }] };
  }
  const sha256 = sha256Hex(schemaText);
  const hit = cache.get(sha256);
  if (hit !== undefined) {
    cache.delete(sha256);
    cache.set(sha256, hit);
    return { ok: true, validator: hit };
  }
  const screened = screenSchema(schema);
  if (!screened.ok) return { ok: false, errors: screened.errors.map((e: SchemaError) => ({ field: e.pointer, detail: e.detail })) };
  if (validateDraft07(toPlain(schema, true)) !== true) return { ok: false, errors: metaErrors(validateDraft07.errors) };
  const ajv = newAjv();
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(screened.ajvSchema);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { ok: false, errors: [{ field: "", detail: `schema does not compile: ${msg.slice(0, 300)}` }] };
  }
  const compiled: CompiledSchema = { sha256, schemaText, schema, validate, ajv };
  remember(compiled);
  return { ok: true, validator: compiled };
}

export function compileCacheStats(): { size: number; capacity: number; evictions: number } {
  return { size: cache.size, capacity: COMPILE_CACHE_SIZE, evictions };
}

/** Number of schemas the validator's ajv instance still holds (0 after eviction). */
export function ajvSchemaCount(v: CompiledSchema): number {
  const internal = v.ajv as unknown as { _cache: Map<unknown, unknown>; schemas: Record<string, unknown> };
  return internal._cache.size + Object.keys(internal.schemas).length;
}

export function clearCompileCache(): void {
  for (const c of cache.values()) c.ajv.removeSchema();
  cache.clear();
}
