// `chatd migrate` is idempotent and safe from several processes at once (one advisory lock around everything).
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { withDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { classify, readSqlFiles, splitStatements, statementsOf, statementsToApply, type SqlStatement } from "../../src/db/repeatable.ts";
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
  assert.equal(second, { migrationsApplied: [], sqlFilesApplied: [], sqlStatementsApplied: 0 });
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

test("a sql/ statement the database lacks is applied, with its comment and grant, and nothing else", async () => {
  const url = await emptyDatabase();
  await migrate(url);
  const changed = statementsOf(readSqlFiles()).find((s) => s.role === "define" && s.object === "function chat_private.turn_state")!;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("delete from chatd_meta.repeatable_statements where file = $1 and sha256 = $2", [changed.file, changed.sha256]);
  await client.end();
  const again = await migrate(url);
  assert.equal([again.migrationsApplied, again.sqlFilesApplied, again.sqlStatementsApplied], [[], ["130_turn_state.sql"], 3]);
  assert.equal(await migrate(url), { migrationsApplied: [], sqlFilesApplied: [], sqlStatementsApplied: 0 }, "recorded again");
});

test("splitStatements: semicolons in strings, identifiers, dollar-quoted bodies and comments do not end a statement", () => {
  const text = "-- heading; not a statement\nselect 'a;b', E'c\\';d', \"e;f\";\n" +
    "create function s.g() returns int as $body$ select 1; $$ not the end $$; $body$ language sql;\n" +
    "/* x; y */ comment on function s.g() is 'it''s; fine';\n-- trailing comment\n";
  assert.equal(splitStatements(text), [
    "select 'a;b', E'c\\';d', \"e;f\";",
    "create function s.g() returns int as $body$ select 1; $$ not the end $$; $body$ language sql;",
    "comment on function s.g() is 'it''s; fine';",
  ]);
});

test("which statements a run applies: new text, what a migration changed, and what builds on them", () => {
  const files = {
    "010_a.sql": "create or replace function s.f() returns int as $$ select 1; $$ language sql;\n" +
      "comment on function s.f() is 'f; not the end';\nselect chat_private.grant_execute('s.f()', '{r}');\n" +
      "create or replace view s.v as select 1 as one;\ncomment on view s.v is 'v';\n",
    "020_b.sql": "comment on function s.f() is E'f\\'s tag';\ndo $$ begin perform 1; end $$;\n",
  };
  const statements: SqlStatement[] = Object.entries(files).flatMap(([file, text]) => splitStatements(text).map((s) => classify(file, s)));
  assert.equal(statements.map((s) => [s.role, s.object]), [
    ["define", "function s.f"], ["attach", "function s.f"], ["attach", "function s.f"], ["define", "relation s.v"],
    ["attach", "relation s.v"], ["attach", "function s.f"], ["other", `statement ${statements[6]!.sha256}`]]);
  const all = new Map(Object.keys(files).map((file) => [file, new Set(statements.filter((s) => s.file === file).map((s) => s.sha256))]));
  const without = (index: number) => new Map([...all].map(([file, shas]) => [file, new Set([...shas].filter((sha) => sha !== statements[index]!.sha256))]));
  const applied = (recorded: Map<string, Set<string>>, touched: string[] = [], afterMigration = false) =>
    statementsToApply(statements, recorded, new Set(touched), afterMigration).map((s) => statements.indexOf(s));
  assert.equal(applied(all), [], "nothing new: nothing");
  assert.equal(applied(without(0)), [0, 1, 2, 5, 6], "a changed function: it, its comment and grant, the later comment, what follows");
  assert.equal(applied(without(4)), [4, 6], "a changed comment on the view: not the view");
  assert.equal(applied(all, ["relation s.v"], true), [3, 4, 6], "a view a migration changed, and the statements after a migration");
  assert.equal(applied(new Map()), [0, 1, 2, 3, 4, 5, 6], "a database that never recorded statements: all");
});

test("an up-to-date database: migrate applies nothing and leaves the recorded contract as it was", async () => {
  const url = await emptyDatabase();
  await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const contract = async () => (await client.query("select migration, sql_sha256, migrated_at from chatd_meta.schema_contract")).rows;
  const before = await contract();
  assert.equal(await migrate(url), { migrationsApplied: [], sqlFilesApplied: [], sqlStatementsApplied: 0 });
  assert.equal(await contract(), before);
  await client.end();
});

test.run();
