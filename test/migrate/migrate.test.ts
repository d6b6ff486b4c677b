// `chatd migrate` is idempotent and safe from several processes at once (one advisory lock around everything).
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { withDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { filesToApply, type SqlFile } from "../../src/db/repeatable.ts";
import { runChatd } from "../support/cli.ts";

const admin = () => {
  const url = process.env.CHATD_TEST_ADMIN_URL;
  if (!url) throw new Error("run through npm test");
  return url;
};
const created: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `chatd_t_${process.env.CHATD_TEST_TEMPLATE?.split("_").pop()}_m${created.length}${process.pid}`;
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  await client.query(`create database ${pg.escapeIdentifier(name)}`);
  await client.end();
  created.push(name);
  return withDatabase(admin(), name);
}

const migrateInChildProcess = (url: string) => runChatd(["migrate"], url);

test.after(async () => {
  const client = new pg.Client({ connectionString: admin() });
  await client.connect();
  for (const name of created) await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await client.end();
});

test("migrate twice: the second run applies nothing", async () => {
  const url = await emptyDatabase();
  const first = await migrate(url);
  assert.ok(first.migrationsApplied.length >= 2, "first run applies the versioned migrations");
  assert.ok(first.sqlFilesApplied.length >= 8, "first run applies the repeatable sql/ files");
  const second = await migrate(url);
  assert.equal(second, { migrationsApplied: [], sqlFilesApplied: [] });
});

test("migrate from two processes at once: both succeed and everything is applied exactly once", async () => {
  const url = await emptyDatabase();
  const [a, b] = await Promise.all([migrateInChildProcess(url), migrateInChildProcess(url)]);
  assert.is(a.code, 0, a.out);
  assert.is(b.code, 0, b.out);
  const outputs = [a.out, b.out].join("\n");
  const applied = [...outputs.matchAll(/migrations applied: (\d+)/g)].map((match) => Number(match[1]));
  assert.equal(applied.sort(), [0, applied[1]!], "exactly one process applied the migrations");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ n: string }>("select count(*) as n from chatd_meta.pgmigrations");
  const rules = await client.query<{ n: string }>("select count(*) as n from chat_private.transition_rules");
  await client.end();
  assert.is(Number(rows[0]!.n), applied[1]);
  assert.ok(Number(rules.rows[0]!.n) > 0, "the repeatable files ran");
});

test("a changed sql/ checksum re-applies the repeatable files", async () => {
  const url = await emptyDatabase();
  await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("update chatd_meta.repeatable_sql set sha256 = 'stale' where name = '010_helpers.sql'");
  await client.end();
  const again = await migrate(url);
  assert.equal(again.migrationsApplied, []);
  assert.ok(again.sqlFilesApplied.includes("010_helpers.sql"));
});

test("a run re-applies a changed file and the files after it, all of them after a migration, none when unchanged", () => {
  const files: SqlFile[] = ["010_a.sql", "020_b.sql", "030_c.sql"].map((name) => ({ name, text: "", sha256: name }));
  const recorded = (changed: string[]) => new Map(files.map((file) => [file.name, changed.includes(file.name) ? "old" : file.sha256]));
  const names = (list: SqlFile[]) => list.map((file) => file.name);
  assert.equal(names(filesToApply(files, recorded([]), false)), []);
  assert.equal(names(filesToApply(files, recorded(["030_c.sql"]), false)), ["030_c.sql"]);
  assert.equal(names(filesToApply(files, recorded(["020_b.sql"]), false)), ["020_b.sql", "030_c.sql"]);
  assert.equal(names(filesToApply(files, recorded([]), true)), ["010_a.sql", "020_b.sql", "030_c.sql"]);
  const withoutLast = new Map([...recorded([])].filter(([name]) => name !== "030_c.sql"));
  assert.equal(names(filesToApply(files, withoutLast, false)), ["030_c.sql"], "a new file");
});

test("an up-to-date database: migrate applies nothing and leaves the recorded contract as it was", async () => {
  const url = await emptyDatabase();
  await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const contract = async () => (await client.query("select migration, sql_sha256, migrated_at from chatd_meta.schema_contract")).rows;
  const before = await contract();
  assert.equal(await migrate(url), { migrationsApplied: [], sqlFilesApplied: [] });
  assert.equal(await contract(), before);
  await client.end();
});

test.run();
