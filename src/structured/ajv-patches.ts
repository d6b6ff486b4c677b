// The patches chatd applies to ajv and re2js, apart from the compiler (compile.ts) that uses them:
// each reaches into a library's internals, which test/repo/pinned-internals.test.ts pins to the
// exact versions these were written for (ajv 8.20.0, re2js 2.10.0).
// - ajv's allSchemaProperties helper (ajv/dist/vocabularies/code.js) keeps "__proto__" while one of
//   our schemas compiles;
// - ajv's code generation for the key loops (iterateCachedKeys) reads cached key and value arrays;
// - a RegExpEngine of RE2 programs, whose key patterns walk re2js's private lazy DFA (KeyPattern).

import { _, type Ajv, type CodeKeywordDefinition } from "ajv";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import { createRequire } from "node:module";
import { RE2Set, type RE2JS } from "re2js";
import { ownKeys, ownValues } from "./exact-data.ts";
import { compileRe2, RewrittenPattern, type PatternProgram } from "./patterns.ts";

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

export const re2Engine = ((pattern: string) => {
  const re = screenedPatterns?.get(pattern) ?? compileRe2(pattern);
  // The screen never lets a rewritten (lookahead) pattern be a patternProperties key.
  if (!keyPatterns) return re;
  if (re instanceof RewrittenPattern) throw new Error("a rewritten pattern cannot test keys");
  return new KeyPattern(re);
}) as unknown as RegExpEngine;
// Only used by ajv's standalone code generation, which we never run.
re2Engine.code = "re2js";

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
export function iterateCachedKeys(ajv: Ajv): void {
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

/**
 * Runs ajv's compile of one of our screened schemas: the patched helper keeps every property name,
 * and re2Engine hands out the programs the screen already compiled (compilation is synchronous).
 */
export function compilingOurSchema<T>(patterns: ReadonlyMap<string, PatternProgram>, compile: () => T): T {
  screenedPatterns = patterns;
  compilingOurs = true;
  try {
    return compile();
  } finally {
    screenedPatterns = undefined;
    compilingOurs = false;
  }
}
