// The official JSON-Schema-Test-Suite, draft7 (vendored in test/fixtures/json-schema-test-suite):
// every group inside the documented subset compiles and decides every case as the suite says; the
// groups outside it (listed below, with the rule that excludes them) are refused.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileSchema, parseJsonSafe, SCHEMA_LIMITS, validateValue, type CompileResult } from "../../src/structured/index.ts";
import { loadSuite, SUITE_DIR } from "./suite.ts";

// Group id ("file.json: description") -> why it is outside the documented subset.
const OUT_OF_SUBSET = JSON.parse(readFileSync(join(SUITE_DIR, "..", "out-of-subset.json"), "utf8")) as Record<string, string>;

function outOfSubset(id: string): boolean {
  return id in OUT_OF_SUBSET;
}

function compileText(text: string): CompileResult | { ok: false; boundary: string } {
  const parsed = parseJsonSafe(text, SCHEMA_LIMITS);
  if (!parsed.ok) return { ok: false, boundary: parsed.error.rule };
  return compileSchema(parsed.value);
}

const groups = loadSuite();

test("the vendored suite is all there (a lost file would shrink the test silently)", () => {
  assert.is(groups.length, 257);
  assert.is(groups.filter((g) => !outOfSubset(g.id)).length, 213);
  for (const id of Object.keys(OUT_OF_SUBSET)) assert.ok(groups.some((g) => g.id === id), `stale entry: ${id}`);
});

test("every in-subset group compiles and decides every case as the suite says", () => {
  const wrong: string[] = [];
  let cases = 0;
  for (const group of groups.filter((g) => !outOfSubset(g.id))) {
    const compiled = compileText(group.schemaText);
    if (!compiled.ok) {
      wrong.push(`${group.id}: refused (${JSON.stringify("errors" in compiled ? compiled.errors[0] : compiled.boundary)})`);
      continue;
    }
    for (const c of group.tests) {
      cases++;
      const r = validateValue(compiled.validator, c.dataText);
      if (r.ok !== c.valid) wrong.push(`${group.id} / ${c.description}: expected ${c.valid ? "valid" : "invalid"}`);
    }
  }
  assert.equal(wrong, []);
  assert.is(cases, 801);
});

test("every group outside the subset is refused", () => {
  const accepted = groups.filter((g) => outOfSubset(g.id)).filter((g) => compileText(g.schemaText).ok).map((g) => g.id);
  assert.equal(accepted, []);
});

test.run();
