// The envelope rules of response_format are written once, as the shared fixture; this runs its SQL-visible cases
// against PostgreSQL (test/structured/envelope.test.ts runs all of them against the TypeScript validator).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

interface EnvelopeCase {
  name: string;
  text: string;
  valid: boolean;
  field?: string;
  sql: boolean;
}

const cases = JSON.parse(readFileSync(join(projectRoot, "test", "fixtures", "response-format-envelope.json"), "utf8")) as EnvelopeCase[];
const sqlCases = cases.filter((entry) => entry.sql);
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

test("the fixture has SQL-visible cases, valid and invalid", () => {
  assert.ok(sqlCases.some((entry) => entry.valid));
  assert.ok(sqlCases.filter((entry) => !entry.valid).length >= 20);
});

for (const entry of sqlCases) {
  test(`envelope (SQL): ${entry.name}`, async () => {
    const { rows } = await db.pool.query<{ field: string }>(
      "select field from chat_private.response_format_errors($1::jsonb) limit 1", [entry.text]);
    if (entry.valid) {
      assert.equal(rows, [], `expected no envelope error, got ${rows[0]?.field}`);
      return;
    }
    assert.is(rows[0]?.field, entry.field);
    // The transition entry point raises the same field as RFINV with the field in the error's column.
    const error = await db.pool.query("select chat_private.parse_response_format($1)", [entry.text]).then(
      () => undefined, (caught: { code?: string; column?: string }) => caught);
    assert.is(error?.code, "RFINV");
    assert.is(error?.column, entry.field);
  });
}

test.run();
