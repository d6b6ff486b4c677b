// `chatd migrate` on a live database: re-applying sql/ takes no lock that blocks clients, and a migration that does
// need a table lock waits for it only as long as lock_timeout allows, in the server, even when its client is killed.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { projectRoot } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createEmptyDatabase, createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { waitFor } from "../support/wait.ts";
import { installRelease } from "./release.ts";

const opened: pg.Client[] = [];
const databases: TestDatabase[] = [];

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  opened.push(client);
  return client;
}

/** A transaction that has read chat_messages and stays open: it holds AccessShareLock on the table. */
async function openReader(url: string): Promise<pg.Client> {
  const reader = await connect(url);
  await reader.query("begin");
  await reader.query("select count(*) from chat_public.chat_messages");
  return reader;
}

interface Wait {
  pid: number;
  relation: string | null;
}

/** Resolves once a backend of this database other than `except` waits for a lock (polls pg_locks); null once stopped. */
async function someoneWaits(observer: pg.Client, except: number[], stop = { done: false }): Promise<Wait | null> {
  while (!stop.done) {
    const { rows } = await observer.query<{ pid: number; relation: string | null }>(
      `select l.pid, l.relation::regclass::text as relation from pg_locks l
       where not l.granted and l.database = (select oid from pg_database where datname = current_database())
         and not (l.pid = any ($1)) limit 1`, [except]);
    if (rows[0]) return rows[0];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

function failAfter(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref());
}

const pidOf = async (client: pg.Client) => (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;

test.after.each(async () => {
  for (const client of opened.splice(0)) await client.end().catch(() => {});
  for (const db of databases.splice(0)) await db.drop();
});

test("re-applying all of sql/ while a transaction holds a read of chat_messages: the migration completes, other reads are not blocked", async () => {
  const db = await createTestDatabase();
  databases.push(db);
  const reader = await openReader(db.url);
  const observer = await connect(db.url);
  // No statement recorded: the whole layer is applied again, the largest change of sql/ there is.
  await observer.query("delete from chatd_meta.repeatable_statements");
  const migration = migrate(db.url, () => {}, { attempts: 1 });
  const stop = { done: false };
  const first = await Promise.race([migration.then(() => "completed"),
    someoneWaits(observer, [await pidOf(reader), await pidOf(observer)], stop).then((wait) => `waits for a lock on ${wait?.relation}`)]);
  stop.done = true;
  const third = await connect(db.url);
  await third.query("set statement_timeout = '2s'");
  const read = await third.query<{ n: string }>("select count(*) as n from chat_public.chat_messages").then(
    () => "read", (error: { code?: string }) => `blocked (${error.code})`);
  await reader.query("commit");
  const result = await Promise.race([migration, failAfter(30_000, "the migration")]);
  assert.is(first, "completed", "the migration never waited for a lock");
  assert.is(read, "read", "a third connection's read of chat_messages is not blocked");
  assert.ok(result.sqlFilesApplied.length > 10, "the whole layer was re-applied");
});

/** The previous release with one policy missing: its adoption by migration 0008 needs a lock on chat_messages. */
async function releaseNeedingALock(): Promise<TestDatabase> {
  const db = await createEmptyDatabase();
  databases.push(db);
  await installRelease(db.url);
  await db.pool.query("drop policy select_own on chat_public.chat_messages");
  return db;
}

test("a migration that needs a table lock behind an open reader gives up after lock_timeout, retries, and fails without waiting on", async () => {
  const db = await releaseNeedingALock();
  const reader = await openReader(db.url);
  const lines: string[] = [];
  const started = Date.now();
  const code = await sqlState(Promise.race([migrate(db.url, (line) => lines.push(line), { lockTimeoutMs: 200, attempts: 3, retryDelayMs: 50 }),
    failAfter(20_000, "the end of migrate")]));
  const elapsed = Date.now() - started;
  assert.is(code, "55P03", "lock_not_available");
  assert.is(lines.filter((line) => line.includes("retrying")).length, 2, lines.join("\n"));
  assert.ok(elapsed < 10_000, `bounded (${elapsed} ms)`);
  // This database's sessions only: other test files share the cluster.
  const waiting = await db.pool.query(`select 1 from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where not l.granted and a.datname = current_database()`);
  assert.is(waiting.rowCount, 0, "nothing waits in the server once migrate has failed");
  await reader.query("commit");
  const result = await migrate(db.url);
  assert.ok(result.migrationsApplied.includes("0008_stateful_objects_from_sql"));
  const policy = await db.pool.query("select 1 from pg_policy where polrelid = 'chat_public.chat_messages'::regclass and polname = 'select_own'");
  assert.is(policy.rowCount, 1);
});

test("chatd migrate killed while it waits for a lock: its server session stops waiting, readers are not left queued behind it", async () => {
  const db = await releaseNeedingALock();
  const reader = await openReader(db.url);
  const observer = await connect(db.url);
  const child = spawn(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "migrate"], {
    env: { ...process.env, DATABASE_URL: db.url, CHATD_LOG_LEVEL: "warn" }, stdio: "ignore" });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const stop = { done: false };
  const wait = await Promise.race([someoneWaits(observer, [await pidOf(reader), await pidOf(observer)], stop),
    exited.then(() => null), failAfter(60_000, "a lock wait of chatd migrate")]);
  stop.done = true;
  if (!wait) throw new Error("chatd migrate exited without waiting for a lock");
  assert.is(wait.relation, "chat_public.chat_messages");
  child.kill("SIGKILL");
  await exited;
  // The killed client's backend ends once the server notices (lock_timeout, the connection check).
  await waitFor("the end of the killed migration's server session", async () =>
    (await observer.query("select 1 from pg_stat_activity where pid = $1", [wait.pid])).rowCount === 0, 15_000);
  const third = await connect(db.url);
  await third.query("set statement_timeout = '2s'");
  await third.query("select count(*) from chat_public.chat_messages");
  await reader.query("commit");
});

test.run();
