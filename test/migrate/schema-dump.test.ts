// schema.sql is the normalized schema of a fresh install; it is stale when migrations/ or sql/ changed without
// `npm run schema:dump`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { diffDumps, dumpSchema, normalizeDump } from "../../src/db/schema-dump.ts";
import { createTestDatabase } from "../support/db.ts";

test("schema.sql is the schema of a fresh install (else: npm run schema:dump, and commit it)", async () => {
  const db = await createTestDatabase();
  try {
    assert.equal(diffDumps(await dumpSchema(db.url), readFileSync(join(projectRoot, "schema.sql"), "utf8")), []);
  } finally {
    await db.drop();
  }
});

test("normalization: entry order, owners, headers and the order of grants do not matter", () => {
  const dump = (grants: string[], owner: string, order: "ab" | "ba") => {
    const a = `--\n-- Name: a(); Type: FUNCTION; Schema: chat_private; Owner: ${owner}\n--\n\nCREATE FUNCTION chat_private.a() ...;\n`;
    const b = `--\n-- Name: FUNCTION a(); Type: ACL; Schema: chat_private; Owner: ${owner}\n--\n\n${grants.join("\n")}\n`;
    return `-- Dumped by pg_dump version 15.${owner.length}\n\\restrict ${owner}\nSET lock_timeout = 0;\n${order === "ab" ? a + b : b + a}`;
  };
  const grants = ["GRANT ALL ON FUNCTION chat_private.a() TO chat_worker;", "REVOKE ALL ON FUNCTION chat_private.a() FROM PUBLIC;"];
  assert.is(normalizeDump(dump(grants, "postgres", "ab")), normalizeDump(dump([...grants].reverse(), "-", "ba")));
  assert.is.not(normalizeDump(dump(grants, "-", "ab")), normalizeDump(dump(grants.slice(1), "-", "ab")), "a missing grant shows");
});

test.run();
