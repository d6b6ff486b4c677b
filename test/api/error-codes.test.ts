// The TypeScript error table must equal sql/README.md's SQLSTATE registry (one table for SQL and the API).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ERROR_CODES, type RegisteredCode } from "../../src/api/error-codes.ts";
import { projectRoot } from "../../src/db/database.ts";

function registryFromReadme(): Record<string, RegisteredCode> {
  const text = readFileSync(join(projectRoot, "sql", "README.md"), "utf8");
  const section = text.slice(text.indexOf("## SQLSTATE registry"));
  const table: Record<string, RegisteredCode> = {};
  for (const line of section.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    const [state, code, field] = cells;
    if (cells.length !== 4 || !state || !code || field === undefined || !/^`[0-9A-Z]{5}`$/.test(state)) continue;
    const fieldValue = field === "—" ? null : field.startsWith("from `column`") ? "column" : field.replace(/`/g, "");
    table[state.replace(/`/g, "")] = { code: code.replace(/`/g, ""), field: fieldValue };
  }
  return table;
}

test("src/api/error-codes.ts equals the SQLSTATE registry in sql/README.md", () => {
  const readme = registryFromReadme();
  assert.ok(Object.keys(readme).length >= 20, "the README table was parsed");
  assert.equal({ ...ERROR_CODES }, readme);
});

test.run();
