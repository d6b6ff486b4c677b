// Patterns (`pattern`, `patternProperties` keys): ECMA-262 sources compiled for RE2, and the
// lookahead patterns that schema generators emit, with their ECMAScript meaning, on RE2. RE2 has no
// lookaround (it is what keeps every pattern linear), so each pattern below is matched by an exactly
// equivalent RE2 pattern, plus a length test where the lookahead only bounds the length. Only these
// exact sources are rewritten (a `pattern` keyword, not patternProperties); every other pattern keeps
// RE2 semantics and is refused if RE2 cannot compile it. Equality with the original, run by V8's
// backtracking engine as the oracle, is checked by fast-check property tests
// (test/structured/lookahead-patterns.test.ts).

import { RE2JS } from "re2js";
import { SCHEMA_MAX_PATTERN_LENGTH } from "./caps.ts";

interface Rewrite {
  readonly origin: string;
  /** RE2 (Go) syntax. */
  readonly re2: string;
  readonly length?: (n: number, s: string) => boolean;
}

const DUR_TIME = String.raw`T(?:\d+H(?:\d+M)?(?:\d+(?:[.,]\d+)?S)?|\d+M(?:\d+(?:[.,]\d+)?S)?|\d+(?:[.,]\d+)?S)`;

export const LOOKAHEAD_REWRITES: ReadonlyMap<string, Rewrite> = new Map<string, Rewrite>([
  [
    // Pydantic v2's Decimal: digits with at most one dot, an optional sign, and at least one digit
    // (the lookahead refuses strings made only of signs and dots; `0*\d*` is `\d*`).
    String.raw`^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$`,
    { origin: "Pydantic Decimal", re2: String.raw`^[+-]?(?:\d+\.?\d*|\.\d+)$` },
  ],
  [
    // zod 4's ISO duration: weeks alone, or a non-empty Y?M?D? and/or a non-empty T part. `(?!.*W)`
    // cannot fail once the rest matches (no W or line terminator can be in it); `(?=\d|T\d)` says the
    // part after P is not empty, and `T(?=\d)` that the time part is not.
    String.raw`^P(?:(\d+W)|(?!.*W)(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?)$`,
    {
      origin: "zod duration",
      re2: String.raw`^P(?:\d+W|(?:\d+Y(?:\d+M)?(?:\d+D)?|\d+M(?:\d+D)?|\d+D)(?:` + DUR_TIME + String.raw`)?|` + DUR_TIME + `)$`,
    },
  ],
  [
    // zod 4's hostname: the lookahead `(?=.{1,253}\.?$)` is a length bound (the rest matches no line
    // terminator): 1 to 253 characters, or 254 ending in a dot.
    String.raw`^(?=.{1,253}\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\.?$`,
    {
      origin: "zod hostname",
      re2: String.raw`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\.?$`,
      length: (n, s) => n >= 1 && (n <= 253 || (n === 254 && s.endsWith("."))),
    },
  ],
]);

/** A rewritten pattern as ajv's `pattern` keyword uses it: `test` and a distinct `toString`. */
export class RewrittenPattern {
  readonly #source: string;
  readonly #re: RE2JS;
  readonly #length: ((n: number, s: string) => boolean) | undefined;
  constructor(source: string, rewrite: Rewrite) {
    this.#source = source;
    this.#re = RE2JS.compile(rewrite.re2);
    this.#length = rewrite.length;
  }
  test(s: string): boolean {
    return (this.#length === undefined || this.#length(s.length, s)) && this.#re.test(s);
  }
  toString(): string {
    return this.#source;
  }
}

export function rewrittenPattern(source: string): RewrittenPattern | undefined {
  const r = LOOKAHEAD_REWRITES.get(source);
  return r === undefined ? undefined : new RewrittenPattern(source, r);
}

/** What ajv's pattern keywords call: an RE2 program or a rewritten lookahead pattern. */
export type PatternProgram = RE2JS | RewrittenPattern;

/** The RE2 program for a JSON Schema (ECMA-262) pattern; throws if RE2 cannot compile it. */
export function compileRe2(pattern: string): RE2JS {
  return RE2JS.compile(RE2JS.translateRegExp(pattern));
}

/**
 * Why a pattern is refused, or undefined; keeps its program in `compiled` (compile.ts hands it to
 * ajv). `rewrites`: whether LOOKAHEAD_REWRITES apply (a `pattern` keyword; keys always run on RE2).
 */
export function patternProblem(pattern: string, compiled: Map<string, PatternProgram> | undefined, rewrites: boolean): string | undefined {
  if (pattern.length > SCHEMA_MAX_PATTERN_LENGTH) return `pattern longer than ${SCHEMA_MAX_PATTERN_LENGTH} characters`;
  const known = compiled?.get(pattern);
  if (known instanceof RewrittenPattern && !rewrites) return "a lookahead pattern is only supported in the pattern keyword, not as a patternProperties key";
  if (known !== undefined) return undefined;
  const rewritten = rewrites ? rewrittenPattern(pattern) : undefined;
  if (rewritten !== undefined) {
    compiled?.set(pattern, rewritten);
    return undefined;
  }
  try {
    const re = compileRe2(pattern);
    compiled?.set(pattern, re);
    return undefined;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return `pattern is not supported by RE2: ${msg.slice(0, 200)}`;
  }
}
