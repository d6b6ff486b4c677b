// ajv compilation: draft-07, fail-fast, no $data, no loading, RE2 patterns, our formats,
// exact numeric keywords, and a bounded cache keyed by the schema's SHA-256.
//
// Each cached schema gets its own Ajv instance: ajv keeps every compiled schema for the life of
// its instance, so dropping the instance (and clearing it with removeSchema on eviction) is what
// actually returns the memory. Meta-validation uses one shared instance that only ever holds the
// bundled draft-07 meta-schema.

import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };
import { compilingOurSchema, iterateCachedKeys, re2Engine } from "./ajv-patches.ts";
import { COMPILE_CACHE_SIZE, SCHEMA_LIMITS, SCHEMA_MAX_BYTES } from "./caps.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";
import { EXACT_KEYWORD_DEFS } from "./exact-keywords.ts";
import { FORMAT_CHECKS, SUPPORTED_FORMATS } from "./formats.ts";
import { isJsonObject, limitError, type JsonValue } from "./json-boundary.ts";
import type { ExpandedSize, SizeCounts } from "./schema-graph.ts";
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
  /**
   * @internal the property names `validate` may read from objects by name, or "all" (see
   * propertyReadsOf); any other property is read only through the key loops (ownKeys/ownValues).
   */
  readonly propertyReads: ReadonlySet<string> | "all";
  /** The schema's size as written and as validation reaches it through `$ref`s (schema-graph.ts). */
  readonly size: { readonly written: SizeCounts; readonly expanded: ExpandedSize };
}

export type CompileResult = { ok: true; validator: CompiledSchema } | { ok: false; errors: { field: string; detail: string }[] };


const metaAjv = new Ajv({ strict: false, validateFormats: false, logger: false, allErrors: false });
const validateDraft07 = metaAjv.compile(draft07);

function newAjv(): Ajv {
  const ajv = new Ajv({
    // Off: ajv's strict mode refuses valid draft-07 schemas on opinions that are not draft-07 rules
    // (`if` without `then`/`else`, `then`/`else` without `if`, `additionalItems` beside a schema
    // `items`, a property also matched by a patternProperties pattern). Unknown keywords, the one
    // strict rule we want, are refused by the screen before ajv sees the schema.
    strictSchema: false,
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
    // optimize: ajv's dead-name pass is quadratic in the generated code (~25% of a typical compile);
    // the code it would remove (unused temporaries) costs nothing at run time.
    code: { regExp: re2Engine, optimize: false },
  });
  for (const name of SUPPORTED_FORMATS) ajv.addFormat(name, { type: "string", validate: FORMAT_CHECKS[name] });
  for (const def of EXACT_KEYWORD_DEFS) ajv.addKeyword(def);
  iterateCachedKeys(ajv);
  return ajv;
}


function metaErrors(errors: ErrorObject[] | null | undefined): { field: string; detail: string }[] {
  const e = errors?.[0];
  if (e === undefined) return [{ field: "", detail: "schema does not match the draft-07 meta-schema" }];
  return [{ field: e.instancePath, detail: `${e.message ?? "invalid"} (draft-07 meta-schema)` }];
}

// Keywords (as the screen hands them to ajv) whose code counts an object's properties or compares
// whole objects (Object.keys(data).length, the exact equality keys of const/enum/uniqueItems).
const WHOLE_OBJECT_READERS = new Set(["minProperties", "maxProperties", "chatdConst", "chatdEnum", "chatdUniqueItems"]);

/**
 * The property names `validate` may read from data objects by name: "all" when a keyword of
 * WHOLE_OBJECT_READERS occurs, else every string in the screened schema. The other keywords that
 * read by name (properties, required, dependencies) read only names written in the schema; every
 * other draft-07 keyword reads an object through the key loops (iterateCachedKeys) or not at all.
 * Every key and string is looked at, data (`default`, `examples`) included, so a keyword or name
 * is never missed (referenced subschemas are in the root's `definitions`, which this walk reads); a data string that
 * happens to spell one only costs a property set.
 */
function propertyReadsOf(schema: unknown): ReadonlySet<string> | "all" {
  const names = new Set<string>();
  const walk = (v: unknown): boolean => {
    if (typeof v === "string") names.add(v);
    else if (Array.isArray(v)) return v.every(walk);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (WHOLE_OBJECT_READERS.has(k)) return false;
        names.add(k);
        if (!walk(x)) return false;
      }
    }
    return true;
  };
  return walk(schema) ? names : "all";
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

/** The cached validator of the schema whose canonical text has this SHA-256, most recently used from now on. */
export function cachedValidator(sha256: string): CompiledSchema | undefined {
  const hit = cache.get(sha256);
  if (hit !== undefined) {
    cache.delete(sha256);
    cache.set(sha256, hit);
  }
  return hit;
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
  const hit = cachedValidator(sha256);
  if (hit !== undefined) return { ok: true, validator: hit };
  // The document's own JSON nesting and node count: an envelope's or a JSONL line's parse allowed a few more.
  const capped = limitError(schema, SCHEMA_LIMITS);
  if (capped !== undefined) return { ok: false, errors: [{ field: capped.pointer, detail: `${capped.rule}: ${capped.message}` }] };
  const screened = screenSchema(schema);
  if (!screened.ok) return { ok: false, errors: screened.errors.map((e: SchemaError) => ({ field: e.pointer, detail: e.detail })) };
  if (validateDraft07(toPlain(schema, true)) !== true) return { ok: false, errors: metaErrors(validateDraft07.errors) };
  const ajv = newAjv();
  let validate: ValidateFunction;
  try {
    validate = compilingOurSchema(screened.compiledPatterns, () => ajv.compile(screened.ajvSchema));
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { ok: false, errors: [{ field: "", detail: `schema does not compile: ${msg.slice(0, 300)}` }] };
  }
  const compiled: CompiledSchema = { sha256, schemaText, schema, validate, ajv, propertyReads: propertyReadsOf(screened.ajvSchema), size: { written: screened.written, expanded: screened.expanded } };
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
