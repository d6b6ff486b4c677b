// `chatd migrate` is one atomic step: a run that fails anywhere leaves the database exactly as the previous release
// had it (and that release keeps working on it), and says why in one line with a status per kind of failure.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { freePort } from "../../src/db/embedded.ts";
import { withDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { diffDumps, dumpSchema } from "../../src/db/schema-dump.ts";
import { describeFailure, EXIT_LOCK_TIMEOUT, EXIT_LOGIN_REFUSED, EXIT_STATEMENT_FAILED, EXIT_UNREACHABLE } from "../../src/cli/exit-status.ts";
import { EXIT_SCHEMA_AHEAD } from "../../src/db/schema-contract.ts";
import { runChatd } from "../support/cli.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/db.ts";
import { installRelease, RELEASE, writeWithRelease } from "./release.ts";

const databases: TestDatabase[] = [];
test.after(async () => {
  for (const db of databases) await db.drop();
});

async function database(fresh: boolean): Promise<TestDatabase> {
  const db = fresh ? await createTestDatabase() : await createEmptyDatabase();
  databases.push(db);
  return db;
}

/** What `chatd migrate` records and everything chatd's schemas hold, to compare before and after a run. */
async function state(db: TestDatabase): Promise<{ dump: string; meta: unknown[] }> {
  const { rows } = await db.pool.query(`select (select json_agg(name order by name) from chatd_meta.pgmigrations) as migrations,
    (select json_agg(json_build_array(name, sha256) order by name) from chatd_meta.repeatable_sql) as sql,
    to_regclass('chatd_meta.schema_contract') is not null as has_contract`);
  const contract = rows[0].has_contract ? (await db.pool.query("select * from chatd_meta.schema_contract")).rows : [];
  return { dump: await dumpSchema(db.url), meta: [...rows, ...contract] };
}

/** A single line on stderr, `chatd: ...`, and no stack trace. */
function oneLine(out: string): string {
  const lines = out.trim().split("\n");
  assert.is(lines.length, 1, `one line:\n${out}`);
  assert.not.match(out, /^\s+at /m, "no stack trace");
  return lines[0]!;
}

test(`a migrate from release ${RELEASE} whose sql/ step fails commits nothing: that release keeps working`, async () => {
  const db = await database(false);
  await installRelease(db.url);
  await writeWithRelease(db);
  // An object the new sql/ cannot replace (an operator's own function under a name the new release takes): the
  // last sql/ file fails, after every migration and every earlier file ran in the same transaction.
  await db.pool.query("create function chat_private.service_gauges() returns integer language sql as 'select 1'");
  const before = await state(db);
  const run = await runChatd(["migrate"], db.url);
  assert.is(run.code, EXIT_STATEMENT_FAILED, run.out);
  assert.match(oneLine(run.out), /^chatd: sql\/140_service_gauges\.sql: .*\(SQLSTATE 42P13\)$/);
  const after = await state(db);
  assert.equal(after.meta, before.meta, "no migration, sql/ checksum or contract recorded");
  assert.equal(diffDumps(after.dump, before.dump), [], "chatd's schemas are exactly the previous release's");
  // The previous release's clients and worker, through its own functions, as before the failed run.
  await writeWithRelease(db, "old-release-after-failed-migrate");
  // Once the conflict is gone, the same migrate completes.
  await db.pool.query("drop function chat_private.service_gauges()");
  const retry = await runChatd(["migrate"], db.url);
  assert.is(retry.code, 0, retry.out);
});

test("migrate against a closed port: one line, the unreachable status", async () => {
  // With no wait: by default migrate waits out a failover for CHATD_DB_WAIT_SECONDS (test/ha/migrate-failover).
  const run = await runChatd(["migrate"], `postgres://postgres@127.0.0.1:${await freePort()}/chatd`, undefined,
    { CHATD_DB_WAIT_SECONDS: "0" });
  assert.is(run.code, EXIT_UNREACHABLE, run.out);
  assert.match(oneLine(run.out), /^chatd: database unreachable: .*ECONNREFUSED/);
});

test("migrate of a database that does not exist: one line, the login-refused status", async () => {
  const db = await database(true);
  const run = await runChatd(["migrate"], withDatabase(db.url, "chatd_no_such_database"));
  assert.is(run.code, EXIT_LOGIN_REFUSED, run.out);
  assert.match(oneLine(run.out), /^chatd: the database refused the login: .*does not exist/);
});

test("migrate of a database a newer chatd migrated: one line, the schema-ahead status, nothing applied", async () => {
  const db = await database(true);
  await db.pool.query("insert into chatd_meta.pgmigrations (name, run_on) values ('9999_from_the_future', now())");
  const run = await runChatd(["migrate"], db.url);
  assert.is(run.code, EXIT_SCHEMA_AHEAD, run.out);
  assert.match(oneLine(run.out), /^chatd: the database has migrations this build of chatd does not know \(9999_from_the_future\)/);
});

test("a lock held past every try: the lock-timeout status and one line; nothing applied", async () => {
  const db = await database(true);
  const before = await state(db);
  const reader = await db.pool.connect();
  try {
    await reader.query("begin");
    // What every run reads first, in its transaction: which sql/ files the database has.
    await reader.query("lock table chatd_meta.repeatable_sql in access exclusive mode");
    const error = await migrate(db.url, () => {}, { attempts: 2, lockTimeoutMs: 100, retryDelayMs: 10 }).then(() => undefined, (e: unknown) => e);
    const failure = describeFailure(error);
    assert.is(failure.status, EXIT_LOCK_TIMEOUT, failure.line);
    assert.match(failure.line, /^gave up after 2 tries: another transaction held a lock .* nothing was applied/);
    assert.not.match(failure.line, /\n/);
  } finally {
    await reader.query("rollback");
    reader.release();
  }
  assert.equal((await state(db)).meta, before.meta);
});

test.run();
