// The compatibility gate: `chatd worker`, `serve` and `start` refuse a database that is behind or ahead of their
// build (clear message, exit code 3 or 4), and `chatd migrate --check` reports pending work without applying it.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { readSqlFiles, statementsOf } from "../../src/db/repeatable.ts";
import { EXIT_SCHEMA_AHEAD, EXIT_SCHEMA_BEHIND } from "../../src/db/schema-contract.ts";
import { runChatd as runChatdUnbounded } from "../support/cli.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/db.ts";

const databases: TestDatabase[] = [];
test.after(async () => {
  for (const db of databases) await db.drop();
});

async function current(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

async function empty(): Promise<TestDatabase> {
  const db = await createEmptyDatabase();
  databases.push(db);
  return db;
}

/** A database migrated by a newer chatd: it applied a migration this build does not have. */
async function ahead(): Promise<TestDatabase> {
  const db = await current();
  await db.pool.query("insert into chatd_meta.pgmigrations (name, run_on) values ('9999_from_a_newer_chatd', now())");
  return db;
}

const serveArgs = ["--port", "0"];
/** A command that should refuse at once but starts instead is killed after 30 s (code -1) rather than hanging. */
const runChatd = (args: string[], url: string) => runChatdUnbounded(args, url, 30_000);

test("chatd worker and serve against a database that was never migrated: both refuse (exit 3) and apply nothing", async () => {
  const db = await empty();
  for (const args of [["worker", "--metrics-port", "0"], ["serve", ...serveArgs]]) {
    const run = await runChatd(args, db.url);
    assert.is(run.code, EXIT_SCHEMA_BEHIND, `${args[0]}: ${run.out}`);
    assert.match(run.out, /refusing to start: the database is behind this build of chatd .*run `chatd migrate` first/);
  }
  const schemas = await db.pool.query("select 1 from pg_namespace where nspname = 'chat_public'");
  assert.is(schemas.rowCount, 0, "nothing was applied");
});

test("chatd worker, serve, start and migrate against a database a newer chatd migrated: all refuse (exit 4)", async () => {
  const db = await ahead();
  for (const args of [["worker", "--metrics-port", "0"], ["serve", ...serveArgs], ["start", ...serveArgs], ["migrate"]]) {
    const run = await runChatd(args, db.url);
    assert.is(run.code, EXIT_SCHEMA_AHEAD, `${args[0]}: ${run.out}`);
    assert.match(run.out, /9999_from_a_newer_chatd/);
    assert.match(run.out, /migrated by a newer chatd/);
  }
});

test("a database whose sql/ layer another build applied (same migrations): the worker refuses (exit 3)", async () => {
  const db = await current();
  await db.pool.query("update chatd_meta.schema_contract set sql_sha256 = 'another build'");
  const run = await runChatd(["worker", "--metrics-port", "0"], db.url);
  assert.is(run.code, EXIT_SCHEMA_BEHIND, run.out);
  assert.match(run.out, /sql\/ definitions are not this build's/);
});

test("chatd worker against a database at its contract starts", async () => {
  const db = await current();
  const child = spawn(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "worker", "--metrics-port", "0"], {
    env: { ...process.env, DATABASE_URL: db.url, CHATD_LOG_LEVEL: "info" }, stdio: ["ignore", "ignore", "pipe"] });
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"worker started"')) resolve();
    });
    void exited.then((code) => reject(new Error(`chatd worker exited (${code}) before starting: ${out}`)));
  });
  assert.not.match(out, /refusing to start/);
  child.kill("SIGKILL");
  await exited;
});

test("chatd migrate --check reports pending work and applies none of it", async () => {
  const fresh = await empty();
  const before = await runChatd(["migrate", "--check"], fresh.url);
  assert.is(before.code, EXIT_SCHEMA_BEHIND, before.out);
  assert.match(before.out, /schema: behind/);
  assert.match(before.out, /migrations pending: \d+\n {2}0001_roles_and_schemas\n/);
  assert.match(before.out, /sql\/ files to apply: \d+\n {2}005_execute_grants\.sql\n {2}010_helpers\.sql\n/);
  const meta = await fresh.pool.query("select 1 from pg_namespace where nspname in ('chatd_meta', 'chat_public')");
  assert.is(meta.rowCount, 0, "--check created nothing");

  const db = await current();
  const clean = await runChatd(["migrate", "--check"], db.url);
  assert.is(clean.code, 0, clean.out);
  assert.match(clean.out, /schema: current\nmigrations pending: 0\nsql\/ files to apply: 0/);
  // A changed function of 120 (as another build would have it): only that file has a statement to apply.
  const changedStatement = statementsOf(readSqlFiles()).find((s) => s.file === "120_worker_caches.sql" && s.role === "define")!;
  await db.pool.query("delete from chatd_meta.repeatable_statements where file = $1 and sha256 = $2", [changedStatement.file, changedStatement.sha256]);
  await db.pool.query("update chatd_meta.schema_contract set sql_sha256 = 'changed'");
  const changed = await runChatd(["migrate", "--check"], db.url);
  assert.is(changed.code, EXIT_SCHEMA_BEHIND, changed.out);
  assert.match(changed.out, /sql\/ files to apply: 1\n {2}120_worker_caches\.sql\n/);
  const recorded = await db.pool.query("select 1 from chatd_meta.repeatable_statements where sha256 = $1", [changedStatement.sha256]);
  assert.is(recorded.rowCount, 0, "--check applied nothing");
  const migrated = await runChatd(["migrate"], db.url);
  assert.is(migrated.code, 0, migrated.out);
  assert.match(migrated.out, /migrations applied: 0, sql\/ files applied: 1/);
  assert.is((await runChatd(["migrate", "--check"], db.url)).code, 0);
});

test.run();
