// The SQLSTATE registry, both ways: every custom code that sql/ or migrations/ raises is a row of sql/README.md's
// registry, every row is raised somewhere, and every one is asserted by some test (its quoted name in a test file
// other than the registry checks themselves). test/api/error-codes.test.ts checks the registry against the API's map.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

// PostgreSQL's own classes (Appendix A of its manual): a code in one of them is standard, not chatd's.
const STANDARD_CLASSES = new Set(["00", "01", "02", "03", "08", "09", "0A", "0B", "0F", "0L", "0P", "0Z", "20", "21",
  "22", "23", "24", "25", "26", "27", "28", "2B", "2D", "2F", "34", "38", "39", "3B", "3D", "3F", "40", "42", "44", "53",
  "54", "55", "57", "58", "72", "F0", "HV", "P0", "XX"]);

interface Source { file: string; text: string }

/** Custom codes raised (`errcode = '...'`, `raise sqlstate '...'`) with the files that raise each. */
function raisedCodes(sources: Source[]): Map<string, string[]> {
  const raised = new Map<string, string[]>();
  for (const { file, text } of sources) {
    for (const match of text.matchAll(/(?:errcode\s*(?:=|:=)\s*|raise\s+sqlstate\s+)'([0-9A-Z]{5})'/gi)) {
      const code = match[1]!;
      if (STANDARD_CLASSES.has(code.slice(0, 2))) continue;
      raised.set(code, [...new Set([...(raised.get(code) ?? []), file])]);
    }
  }
  return raised;
}

function registeredCodes(readme: string): string[] {
  const section = readme.slice(readme.indexOf("## SQLSTATE registry"));
  return [...section.matchAll(/^\| `([0-9A-Z]{5})` \|/gm)].map((match) => match[1]!);
}

/** What is wrong with the registry, one line each. */
function registryProblems(raised: Map<string, string[]>, registered: string[], tests: Source[]): string[] {
  const problems: string[] = [];
  for (const [code, files] of raised) {
    if (!registered.includes(code)) problems.push(`${code} is raised in ${files.join(", ")} but is not in sql/README.md's registry`);
  }
  for (const code of registered) {
    if (!raised.has(code)) problems.push(`${code} is registered but nothing in sql/ or migrations/ raises it`);
    const quoted = new RegExp(`["'\`]${code}["'\`]`);
    if (!tests.some(({ text }) => quoted.test(text))) problems.push(`${code} is asserted by no test (no test file names "${code}")`);
  }
  return problems;
}

function read(dir: string, keep: (name: string) => boolean): Source[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => ({ file: relative(projectRoot, path), text: readFileSync(path, "utf8") }));
}

test("the check finds an unregistered code, a code nothing raises and a code no test asserts", () => {
  const raised = raisedCodes([{ file: "sql/x.sql", text: "raise exception 'no' using errcode = 'ZZNEW';\n" +
    "raise exception 'std' using errcode = '23505'; raise sqlstate 'QQOLD';" }]);
  assert.equal([...raised.keys()], ["ZZNEW", "QQOLD"], "standard classes are not chatd's");
  const problems = registryProblems(raised, ["QQOLD", "GONE1"], [{ file: "test/a.test.ts", text: `assert.is(code, "QQOLD");` }]);
  assert.equal(problems, [
    "ZZNEW is raised in sql/x.sql but is not in sql/README.md's registry",
    "GONE1 is registered but nothing in sql/ or migrations/ raises it",
    'GONE1 is asserted by no test (no test file names "GONE1")',
  ]);
});

test("every custom SQLSTATE raised in sql/ and migrations/ is registered, raised and asserted by a test", () => {
  const sql = [...read(join(projectRoot, "sql"), (name) => name.endsWith(".sql")),
    ...read(join(projectRoot, "migrations"), (name) => name.endsWith(".sql"))];
  const registered = registeredCodes(readFileSync(join(projectRoot, "sql", "README.md"), "utf8"));
  assert.ok(registered.length >= 20, "the registry table was parsed");
  const checks = new Set(["test/repo/sqlstates.test.ts", "test/api/error-codes.test.ts"]);
  const tests = read(join(projectRoot, "test"), (name) => name.endsWith(".ts"))
    .filter(({ file }) => !checks.has(file) && !file.startsWith("test/fixtures/"));
  assert.equal(registryProblems(raisedCodes(sql), registered, tests), []);
});

test.run();
