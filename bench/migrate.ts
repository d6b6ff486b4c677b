// `npm run bench:migrate`: what `chatd migrate` costs a live database. (1) An up-to-date database: the in-process
// run and the whole `chatd migrate` command. (2) A function-only change (one definition of sql/010, which every
// later file builds on) while a transaction that read every chatd table and view stays open for HOLD_MS: whether
// the migration waits for a lock, how long it takes, and how long a third connection's read of chat_messages
// waits meanwhile.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { readSqlFiles, statementsOf } from "../src/db/repeatable.ts";
import { benchDatabase, percentile, printTable } from "./support.ts";

const HOLD_MS = 3000;
const db = await benchDatabase("migrate");
try {
  const noop: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const started = performance.now();
    await migrate(db.url);
    noop.push(performance.now() - started);
  }
  const command: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "migrate"],
      { env: { ...process.env, DATABASE_URL: db.url, CHATD_LOG_LEVEL: "warn" } });
    if (run.status !== 0) throw new Error(`chatd migrate failed: ${run.stderr.toString()}`);
    command.push(performance.now() - started);
  }

  const connect = async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    return client;
  };
  const reader = await connect();
  const observer = await connect();
  const third = await connect();
  await reader.query("begin");
  const relations = (await reader.query<{ name: string }>(`select c.oid::regclass::text as name from pg_class c
    where c.relnamespace in ('chat_public'::regnamespace, 'chat_private'::regnamespace) and c.relkind in ('r', 'p', 'v', 'm')`)).rows;
  await reader.query(`lock table ${relations.map((row) => row.name).join(", ")} in access share mode`);
  const readerPid = (await reader.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
  const changed = statementsOf(readSqlFiles()).find((statement) => statement.file === "010_helpers.sql" && statement.role === "define")!;
  await observer.query("delete from chatd_meta.repeatable_statements where file = $1 and sha256 = $2", [changed.file, changed.sha256]);
  await observer.query("update chatd_meta.repeatable_sql set sha256 = 'changed' where name = $1", [changed.file]);
  const started = performance.now();
  let migrationMs = NaN;
  let statements = 0;
  const migration = migrate(db.url).then((result) => {
    statements = result.sqlStatementsApplied;
    migrationMs = performance.now() - started;
  });
  // Until the migration has finished or waits for a lock (pg_locks), then read as a client would.
  let waited = false;
  while (Number.isNaN(migrationMs)) {
    const { rowCount } = await observer.query("select 1 from pg_locks where not granted and pid <> $1", [readerPid]);
    if (rowCount) {
      waited = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readStarted = performance.now();
  let readMs = NaN;
  const read = third.query("select count(*) from chat_public.chat_messages").then(() => (readMs = performance.now() - readStarted));
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
  await reader.query("commit");
  await Promise.all([migration, read]);
  for (const client of [reader, observer, third]) await client.end();

  const sorted = [...noop].sort((a, b) => a - b);
  printTable([
    ["no-op migrate, in process (p50 / max of 10)", `${percentile(sorted, 50).toFixed(0)} / ${sorted[sorted.length - 1]!.toFixed(0)} ms`],
    ["no-op `chatd migrate`, whole command (runs)", command.map((ms) => `${ms.toFixed(0)} ms`).join(", ")],
    [`${changed.object} changed, beside a ${HOLD_MS} ms reader of ${relations.length} tables and views: migration waited for a lock`, waited ? "yes" : "no"],
    ["  migration duration", `${migrationMs.toFixed(0)} ms (${statements} statements applied)`],
    ["  a third connection's read of chat_messages", `${readMs.toFixed(0)} ms`],
  ]);
} finally {
  await db.close();
}
