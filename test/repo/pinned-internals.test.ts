// chatd patches or reads the internals of a few dependencies; a release of one of them can change those without
// notice, so each is pinned to the exact version the code was written for. This test fails, saying what to
// re-check, when package.json's range or the installed version differs from that version.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

const PINNED: { name: string; version: string; reads: string }[] = [
  { name: "ajv", version: "8.20.0",
    reads: "src/structured/ajv-patches.ts replaces ajv/dist/vocabularies/code.js's allSchemaProperties and rewrites its generated code" },
  { name: "re2js", version: "2.10.0", reads: "src/structured/ajv-patches.ts drives re2js's private DFA (class DFA in build/index.js)" },
  { name: "ajv-formats", version: "3.0.1",
    reads: "src/structured/formats.ts takes the RegExps of ajv-formats/dist/formats.js and expects their source's shape" },
  { name: "@ai-sdk/anthropic", version: "4.0.105",
    reads: "src/providers/models.ts reads the model table of @ai-sdk/anthropic/internal" },
];

const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

/** What differs from the pins, one sentence each. */
function pinProblems(declared: Record<string, string>, installed: (name: string) => string): string[] {
  return PINNED.flatMap(({ name, version, reads }) => {
    const problems: string[] = [];
    if (declared[name] !== version) {
      problems.push(`package.json asks for ${name} "${declared[name]}", not exactly "${version}": ${reads}; pin it exactly`);
    }
    const found = installed(name);
    if (found !== version) {
      problems.push(`${name} ${found} is installed, but ${reads} for ${version}: re-check that code against ${found}, ` +
        "then update the version here and in package.json");
    }
    return problems;
  });
}

test("a caret range or another installed version is reported with what to re-check", () => {
  const declared = Object.fromEntries(PINNED.map(({ name, version }) => [name, version]));
  assert.equal(pinProblems(declared, (name) => PINNED.find((pin) => pin.name === name)!.version), []);
  const problems = pinProblems({ ...declared, ajv: "^8.20.0" }, (name) => name === "re2js" ? "2.11.0" : PINNED.find((pin) => pin.name === name)!.version);
  assert.is(problems.length, 2);
  assert.match(problems[0]!, /^package\.json asks for ajv "\^8\.20\.0", not exactly "8\.20\.0": .*pin it exactly$/);
  assert.match(problems[1]!, /^re2js 2\.11\.0 is installed, but src\/structured\/ajv-patches\.ts .* for 2\.10\.0: re-check/);
});

test("every dependency whose internals chatd patches or reads is pinned, and installed at that version", () => {
  const declared = json(join(projectRoot, "package.json")).dependencies as Record<string, string>;
  // Read from disk: re2js's exports map does not expose its package.json.
  const installed = (name: string) => String(json(join(projectRoot, "node_modules", name, "package.json")).version);
  assert.equal(pinProblems(declared, installed), []);
});

test.run();
