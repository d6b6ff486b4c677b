// `chatd migrate` applies only what changed: a run with nothing to do writes no catalog row (each write would
// invalidate every session's cached plans), and a function-only change replaces that function while a reader holds
// every chatd table and view (CREATE OR REPLACE VIEW would wait for it, then give up).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { migrate } from "../../src/db/migrate.ts";
import { readSqlFiles, statementsOf } from "../../src/db/repeatable.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const databases: TestDatabase[] = [];
test.after(async () => {
  for (const db of databases) await db.drop();
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

/** Catalogs whose row versions a schema change writes; pg_database's row of this database only. */
const CATALOGS = ["pg_class", "pg_proc", "pg_namespace", "pg_type", "pg_attribute", "pg_rewrite", "pg_trigger",
  "pg_policy", "pg_description", "pg_default_acl", "pg_depend", "pg_database"];

/** catalog -> its row versions (xmin:ctid): an update, insert or delete changes the set. */
async function rowVersions(pool: pg.Pool): Promise<Map<string, Set<string>>> {
  const versions = new Map<string, Set<string>>();
  for (const catalog of CATALOGS) {
    const where = catalog === "pg_database" ? "where datname = current_database()" : "";
    const { rows } = await pool.query<{ v: string }>(`select xmin::text || ':' || ctid::text as v from pg_catalog.${catalog} ${where}`);
    versions.set(catalog, new Set(rows.map((row) => row.v)));
  }
  return versions;
}

/** Per catalog, how many row versions are new since `before`. */
function written(before: Map<string, Set<string>>, after: Map<string, Set<string>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [catalog, rows] of after) {
    const fresh = [...rows].filter((row) => !before.get(catalog)!.has(row)).length;
    const gone = [...before.get(catalog)!].filter((row) => !rows.has(row)).length;
    if (fresh + gone > 0) out[catalog] = Math.max(fresh, gone);
  }
  return out;
}

test("a migrate with nothing to do writes no catalog row", async () => {
  const db = await database();
  // A database cloned from the template lacks what CREATE DATABASE resets (its own ACL): the first run sets that.
  await migrate(db.url);
  const before = await rowVersions(db.pool);
  const result = await migrate(db.url);

  assert.equal(result, { migrationsApplied: [], sqlFilesApplied: [], sqlStatementsApplied: 0 });
  assert.equal(written(before, await rowVersions(db.pool)), {});
});

test("a function-only change beside a reader of every chatd table and view: that function is replaced, no view waits", async () => {
  const db = await database();
  // A changed body of one helper that every later file builds on: the database lacks that statement's text (and,
  // as for an older chatd, that file's checksum).
  const changed = statementsOf(readSqlFiles()).find((s) => s.file === "050_chat_internals.sql" && s.role === "define")!;
  const name = changed.object.replace("function chat_private.", "");
  await db.pool.query("delete from chatd_meta.repeatable_statements where file = $1 and sha256 = $2", [changed.file, changed.sha256]);
  await db.pool.query("update chatd_meta.repeatable_sql set sha256 = 'older' where name = $1", [changed.file]);
  const reader = await db.pool.connect();
  try {
    await reader.query("begin");
    const { rows } = await reader.query<{ relation: string }>(`select c.oid::regclass::text as relation from pg_class c
      where c.relnamespace in ('chat_public'::regnamespace, 'chat_private'::regnamespace) and c.relkind in ('r', 'p', 'v', 'm')`);
    assert.ok(rows.length > 20, "every table and view");
    // What a long report holds: ACCESS SHARE on everything it read, until it commits.
    await reader.query(`lock table ${rows.map((row) => row.relation).join(", ")} in access share mode`);
    const before = await rowVersions(db.pool);
    const started = performance.now();
    const result = await migrate(db.url, () => {}, { attempts: 1, lockTimeoutMs: 1000 });
    const took = performance.now() - started;
    console.log(`migrate of a function-only change beside a reader of ${rows.length} tables and views: ${took.toFixed(0)} ms, ` +
      `${result.sqlStatementsApplied} statements`);
    assert.equal(result.migrationsApplied, []);
    const catalogs = written(before, await rowVersions(db.pool));
    for (const untouched of ["pg_class", "pg_namespace", "pg_rewrite", "pg_trigger", "pg_attribute", "pg_type", "pg_policy"]) {
      assert.is(catalogs[untouched], undefined, `${untouched}: no row written (${JSON.stringify(catalogs)})`);
    }
    const after = await db.pool.query<{ proname: string }>(`select distinct proname::text from pg_proc
      where pronamespace in ('chat_public'::regnamespace, 'chat_private'::regnamespace) and xmin::text::bigint >= $1::bigint`,
    [[...before.get("pg_proc")!].map((v) => Number(v.split(":")[0])).reduce((a, b) => Math.max(a, b), 0) + 1]);
    assert.equal(after.rows.map((row) => row.proname), [name], "only the changed function's row");
  } finally {
    await reader.query("rollback");
    reader.release();
  }
});

test.run();
