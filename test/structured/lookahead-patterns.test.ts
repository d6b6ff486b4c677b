// Each rewritten lookahead pattern (src/structured/patterns.ts) decides exactly as the original
// pattern under ECMAScript semantics: V8's own RegExp is the oracle (a backtracking engine is fine in
// a test), on strings drawn from each pattern's alphabet plus characters that must never match.
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LOOKAHEAD_REWRITES, rewrittenPattern } from "../../src/structured/patterns.ts";
import { compile, schemaErrors } from "./helpers.ts";

const DECIMAL = String.raw`^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$`;
const DURATION = [...LOOKAHEAD_REWRITES.entries()].find(([, r]) => r.origin === "zod duration")?.[0] ?? "";
const HOSTNAME = [...LOOKAHEAD_REWRITES.entries()].find(([, r]) => r.origin === "zod hostname")?.[0] ?? "";

function agree(source: string, alphabet: string[], maxLength: number, runs = 20_000): void {
  const oracle = new RegExp(source);
  const ours = rewrittenPattern(source);
  if (ours === undefined) throw new Error(`no rewrite for ${source}`);
  const chars = fc.constantFrom(...alphabet);
  fc.assert(
    fc.property(fc.array(chars, { maxLength }).map((a) => a.join("")), (s) => ours.test(s) === oracle.test(s)),
    { numRuns: runs },
  );
}

test("Pydantic's Decimal pattern: the RE2 rewrite decides as ECMAScript does", () => {
  agree(DECIMAL, ["0", "1", "9", "+", "-", ".", "e", "\n", " ", "\u0661"], 8);
  const re = rewrittenPattern(DECIMAL);
  assert.equal(["1", "-.5", "+007.", ".", "-", "", "1e3", "12\n", "1.2.3"].map((s) => re?.test(s)), [true, true, true, false, false, false, false, false, false]);
});

test("zod's duration pattern: the RE2 rewrite decides as ECMAScript does", () => {
  agree(DURATION, ["P", "T", "Y", "M", "D", "W", "H", "S", "1", "2", ".", ",", "\n", "x"], 12, 40_000);
  // Generated durations, valid and slightly broken, reach the deep branches.
  const unit = fc.constantFrom("1Y", "2M", "3D", "4W", "T", "5H", "6M", "7S", "8.5S", "9,5S", "");
  const oracle = new RegExp(DURATION);
  const ours = rewrittenPattern(DURATION);
  fc.assert(fc.property(fc.array(unit, { maxLength: 6 }), (parts) => {
    const s = `P${parts.join("")}`;
    return ours?.test(s) === oracle.test(s);
  }), { numRuns: 20_000 });
});

test("zod's hostname pattern: the RE2 rewrite plus the length bound decides as ECMAScript does", () => {
  agree(HOSTNAME, ["a", "Z", "0", "-", ".", "_", "\n"], 10);
  const oracle = new RegExp(HOSTNAME);
  const ours = rewrittenPattern(HOSTNAME);
  const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/);
  fc.assert(fc.property(fc.array(label, { minLength: 1, maxLength: 8 }), fc.boolean(), (labels, dot) => {
    const s = labels.join(".") + (dot ? "." : "");
    return ours?.test(s) === oracle.test(s);
  }), { numRuns: 2_000 });
  // The length bound at N and N + 1: 253 characters (254 with a final dot) pass, one more fails.
  const name = (n: number): string => Array.from({ length: Math.ceil(n / 50) }, () => "a".repeat(49)).join(".").slice(0, n);
  for (const s of [name(253), `${name(253)}.`, name(254), `${name(254)}.`]) assert.is(ours?.test(s), oracle.test(s), `${s.length}`);
  assert.ok(ours?.test(name(253)) === true && ours.test(name(254)) === false);
});

test("rewritten patterns are used by pattern, never as patternProperties keys; other lookaheads stay refused", () => {
  const v = compile(JSON.stringify({ properties: { d: { type: "string", pattern: DECIMAL } } }));
  assert.ok(v);
  const errs = schemaErrors(JSON.stringify({ properties: { d: { pattern: DECIMAL } }, patternProperties: { [DECIMAL]: {} } }));
  assert.match(errs[0]?.detail ?? "", /only supported in the pattern keyword/);
  assert.match(schemaErrors('{"pattern":"^(?=a)"}')[0]?.detail ?? "", /not supported by RE2/);
});

test.run();
