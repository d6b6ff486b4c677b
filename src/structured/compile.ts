// ajv compilation: draft-07, fail-fast, no $data, no loading, RE2 patterns, our formats,
// exact numeric keywords, and a bounded cache keyed by the schema's SHA-256.
//
// Each cached schema gets its own Ajv instance: ajv keeps every compiled schema for the life of
// its instance, so dropping the instance (and clearing it with removeSchema on eviction) is what
// actually returns the memory. Meta-validation uses one shared instance that only ever holds the
// bundled draft-07 meta-schema.

import { _, Ajv, type CodeKeywordDefinition, type ErrorObject, type ValidateFunction } from "ajv";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import draft07 from "ajv/dist/refs/json-schema-draft-07.json" with { type: "json" };
import { createRequire } from "node:module";
import { RE2Set, type RE2JS } from "re2js";
import { COMPILE_CACHE_SIZE, SCHEMA_LIMITS, SCHEMA_MAX_BYTES } from "./caps.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";
import { ownKeys, ownValues } from "./exact-data.ts";
import { EXACT_KEYWORD_DEFS } from "./exact-keywords.ts";
import { FORMAT_CHECKS, SUPPORTED_FORMATS } from "./formats.ts";
import { isJsonObject, limitError, type JsonValue } from "./json-boundary.ts";
import type { ExpandedSize, SizeCounts } from "./schema-graph.ts";
import { compileRe2, RewrittenPattern, type PatternProgram } from "./patterns.ts";
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

// ajv's properties, patternProperties and additionalProperties skip a "__proto__" entry (through this
// one helper), a guard for instances whose objects inherit Object.prototype. Ours never do (plain
// data objects and screened schemas have prototypes without properties, exact-data.ts and
// schema-screen.ts), so while one of our schemas compiles the helper keeps every name: a property
// name is data, whatever it is. Other ajv users in the process keep ajv's behaviour.
const ajvCode = createRequire(import.meta.url)("ajv/dist/vocabularies/code.js") as { allSchemaProperties: (map?: object) => string[] };
const ajvAllSchemaProperties = ajvCode.allSchemaProperties;
let compilingOurs = false;
ajvCode.allSchemaProperties = (map) => (compilingOurs ? (map === undefined ? [] : Object.keys(map)) : ajvAllSchemaProperties(map));

// Programs the screen compiled for the schema being compiled (compilation is synchronous).
let screenedPatterns: ReadonlyMap<string, PatternProgram> | undefined;
// True while ajv generates a key loop (iterateCachedKeys): its patterns are tested against keys.
let keyPatterns = false;

/**
 * A pattern tested against object keys (patternProperties, and additionalProperties beside it).
 * re2js's `test` runs a one-pass pattern (most anchored patterns are) on its one-pass engine, which
 * interprets the program rune by rune (~1 µs per key for the counted repetitions in the bench); a
 * single-pattern RE2Set always runs re2js's lazy DFA, falling back to the NFA when the DFA gives up.
 * Same RE2 flags (PERL) as RE2JS.compile, same unanchored search, so the same verdict
 * (cross-checked in test/structured/fast-paths.test.ts). The set is built on first use, so schemas
 * that are only compiled pay nothing; if it cannot be built, the RE2JS program decides.
 *
 * Once the DFA has built the states a key needs, the key is walked over them here (see walkDfa)
 * instead of through `RE2Set.match`, whose per-call set-up (an input object, a Set and a sorted
 * array of ids, a closure per match) was most of its ~0.4 µs per key.
 */
export class KeyPattern {
  readonly #re: RE2JS;
  #set: RE2Set | null | undefined;
  #dfa: LazyDfa | undefined;
  constructor(re: RE2JS) {
    this.#re = re;
  }
  test(s: string): boolean {
    if (this.#set === undefined) {
      try {
        const set = new RE2Set(RE2Set.UNANCHORED, 0, KEY_PATTERN_DFA_BYTES);
        set.add(this.#re.pattern());
        set.compile();
        this.#set = set;
        this.#dfa = lazyDfaOf(set);
      } catch {
        this.#set = null;
      }
    }
    if (this.#set === null) return this.#re.test(s);
    const walked = this.#dfa === undefined ? undefined : walkDfa(this.#dfa, s);
    return walked ?? this.#set.match(s).length > 0;
  }
  /**
   * ajv de-duplicates patterns by toString(). RE2JS returns its pattern text, which never contains
   * U+0000 (the boundary rejects it in schemas), so the suffix keeps key and value programs apart.
   */
  toString(): string {
    return `${this.#re.toString()}\u0000`;
  }
}

// The parts of re2js's DFA (build/index.js, class DFA; not public API) that its own search loop
// (`DFA.run`) reads. `state.next[cls]` is the state after a character of class `cls` (null until
// the DFA has computed it); index `numClasses` is the end-of-text step.
interface DfaState {
  readonly isMatch: boolean;
  readonly next: (DfaState | null)[] | null;
}
interface LazyDfa {
  readonly failed: boolean;
  readonly latin1Class: Int32Array;
  readonly numClasses: number;
  readonly startStates: Map<number, DfaState>;
}
// re2js Utils.EMPTY_BEGIN_LINE | Utils.EMPTY_BEGIN_TEXT: the start flags of a search from offset 0.
const START_AT_BEGINNING = 1 | 4;

/** The set's DFA when it has the shape walkDfa expects (else every key goes to RE2Set.match). */
function lazyDfaOf(set: RE2Set): LazyDfa | undefined {
  const dfa = (set as unknown as { dfa?: Partial<LazyDfa> }).dfa;
  if (dfa === undefined || dfa.failed !== false || !(dfa.latin1Class instanceof Int32Array) || dfa.latin1Class.length !== 256) return undefined;
  if (typeof dfa.numClasses !== "number" || !(dfa.startStates instanceof Map)) return undefined;
  return dfa as LazyDfa;
}

/**
 * `DFA.run` for an unanchored search from offset 0, over states the DFA has already built: true
 * when a match state is reached (the set has one pattern, so any match is the verdict), false at
 * the end of text without one, undefined when a character is outside Latin-1 or a transition is not
 * built yet (RE2Set.match then decides, and builds it). Only reads the cache, so the answer is the
 * one `run` would give; a cache reset by the DFA (its memory budget) leaves these states valid.
 */
function walkDfa(dfa: LazyDfa, s: string): boolean | undefined {
  const start = dfa.startStates.get(START_AT_BEGINNING);
  if (start === undefined) return undefined;
  let state: DfaState = start;
  const classes = dfa.latin1Class;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next: DfaState | null | undefined = c > 0xff ? undefined : state.next?.[classes[c] ?? -1];
    if (next === undefined || next === null) return undefined;
    if (next.isMatch) return true;
    state = next;
  }
  const end = state.next?.[dfa.numClasses];
  return end === undefined || end === null ? undefined : end.isMatch;
}
// DFA state budget of a key pattern (re2js's default is 8 MiB): keys are short, so few states.
const KEY_PATTERN_DFA_BYTES = 1 << 20;

const re2Engine = ((pattern: string) => {
  const re = screenedPatterns?.get(pattern) ?? compileRe2(pattern);
  // The screen never lets a rewritten (lookahead) pattern be a patternProperties key.
  if (!keyPatterns) return re;
  if (re instanceof RewrittenPattern) throw new Error("a rewritten pattern cannot test keys");
  return new KeyPattern(re);
}) as unknown as RegExpEngine;
// Only used by ajv's standalone code generation, which we never run.
re2Engine.code = "re2js";

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

/**
 * The keywords that enumerate an object's keys generate `for (const key in data)` and read
 * `data[key]`; on this instance they generate
 *   `const keys = ownKeys(data); const values = ownValues(data, keys);
 *    for (let i = 0; i < keys.length; i++) { const key = keys[i]; … let data1 = values[i]; … }`
 * instead (exact-data.ts: the same keys in the same order, enumerated once per object per
 * validation instead of once per subschema, and `values[i] === data[key]`). Done by wrapping the
 * instance's own copy of each rule (ajv copies definitions per instance), so the generated code is
 * otherwise ajv's and the global CodeGen is untouched. Measured: 60 `for…in` over a 4,000-key
 * object take ~35 ms on the bench VM; 60 loops over the cached keys ~4 ms of which ~3 ms were the
 * `data[key]` dictionary lookups that `values[i]` replaces.
 *
 * While such a rule generates code, patterns it tests against keys (patternProperties, and
 * additionalProperties next to patternProperties) come from `keyPattern` (see KeyPattern).
 */
function iterateCachedKeys(ajv: Ajv): void {
  for (const keyword of ["additionalProperties", "patternProperties", "propertyNames"]) {
    const rule = ajv.RULES.all[keyword];
    const def = typeof rule === "object" ? rule.definition : undefined;
    const original = def !== undefined && "code" in def ? def.code : undefined;
    if (def === undefined || original === undefined) throw new Error(`ajv keyword ${keyword} has no code generator`);
    (def as CodeKeywordDefinition).code = (cxt, ruleType) => {
      const gen = cxt.gen;
      const forIn = gen.forIn;
      gen.forIn = (prefix, obj, body) => {
        const keys = gen.const("keys", _`${gen.scopeValue("func", { ref: ownKeys })}(${obj})`);
        const values = gen.const("values", _`${gen.scopeValue("func", { ref: ownValues })}(${obj}, ${keys})`);
        return gen.forRange("i", 0, _`${keys}.length`, (i) => {
          const key = gen.const(prefix, _`${keys}[${i}]`);
          // ajv reads the property as `gen.let("data", _`${data}[${key}]`, true)` (subschema.ts).
          const read = `${obj.toString()}[${key.toString()}]`;
          const outerLet = gen.let;
          gen.let = (name, rhs, constant) => outerLet.call(gen, name, rhs !== undefined && rhs !== null && rhs.toString() === read ? _`${values}[${i}]` : rhs, constant);
          try {
            body(key);
          } finally {
            gen.let = outerLet;
          }
        });
      };
      const wasKeyPatterns = keyPatterns;
      keyPatterns = keyword !== "propertyNames";
      try {
        original.call(def, cxt, ruleType);
      } finally {
        gen.forIn = forIn;
        keyPatterns = wasKeyPatterns;
      }
    };
  }
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
  // The document's own JSON nesting and node count: an envelope's or a JSONL line's parse allowed a few more.
  const capped = limitError(schema, SCHEMA_LIMITS);
  if (capped !== undefined) return { ok: false, errors: [{ field: capped.pointer, detail: `${capped.rule}: ${capped.message}` }] };
  const screened = screenSchema(schema);
  if (!screened.ok) return { ok: false, errors: screened.errors.map((e: SchemaError) => ({ field: e.pointer, detail: e.detail })) };
  if (validateDraft07(toPlain(schema, true)) !== true) return { ok: false, errors: metaErrors(validateDraft07.errors) };
  const ajv = newAjv();
  let validate: ValidateFunction;
  try {
    screenedPatterns = screened.compiledPatterns;
    compilingOurs = true;
    validate = ajv.compile(screened.ajvSchema);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { ok: false, errors: [{ field: "", detail: `schema does not compile: ${msg.slice(0, 300)}` }] };
  } finally {
    screenedPatterns = undefined;
    compilingOurs = false;
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
