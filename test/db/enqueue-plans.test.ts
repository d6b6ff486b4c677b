// Adding a job reads the queue through the job key's index, however long the queue. Graphile Worker's add_jobs runs
// on generic plans in chatd's sessions (one plan per session, made at the first call), and a generic plan estimates
// ten job specs: it chose to join them to the jobs table by a sequential scan, so every new chat read every queued
// job. chat_private.add_job, the one way chatd's SQL adds a job, plans it without sequential scans.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import type { TestDatabase } from "../support/db.ts";
import { asUser, chatDatabase, text } from "../support/chats.ts";

let db: TestDatabase;
let user: string;

const QUEUED = 300;

test.before(async () => {
  ({ db, user } = await chatDatabase("enqueue"));
  // A queue as a busy deployment has one: many jobs waiting, half of them running (locked), its statistics known.
  // On a connection of its own: a session keeps the plans it made, and the measured ones must make theirs.
  const setup = new pg.Client({ connectionString: db.url });
  await setup.connect();
  try {
    await setup.query(
      "select graphile_worker.add_job('chat_run', '{}'::json, job_key := 'queued:' || i, max_attempts := 1) from generate_series(1, $1) i",
      [QUEUED]);
    await setup.query("update graphile_worker._private_jobs set locked_at = now(), locked_by = 'elsewhere', attempts = 1 where id % 2 = 0");
    await setup.query("analyze graphile_worker._private_jobs");
  } finally {
    await setup.end();
  }
});
test.after(async () => {
  await db.drop();
});

/** Sequential scans of the jobs table by this session that its statistics have not yet flushed (PostgreSQL 15 keeps
 * them pending across transactions for up to a second): compare before and after. */
async function jobScans(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ scans: string }>(
    "select seq_scan as scans from pg_stat_xact_user_tables where schemaname = 'graphile_worker' and relname = '_private_jobs'");
  return Number(rows[0]!.scans);
}

test("a new chat's job is added through the job key's index, not by reading the queue", async () => {
  const scans = await asUser(db, user, async (client) => {
    const before = await jobScans(client);
    // Twice: a session makes its generic plan at the first call and keeps it.
    for (const content of ["first", "second"]) {
      await client.query("select chat_public.create_chat(content => $1)", [text(content)]);
    }
    return (await jobScans(client)) - before;
  });
  assert.is(scans, 0);
  const { rowCount } = await db.pool.query("select 1 from graphile_worker._private_jobs where key like 'chat:%'");
  assert.is(rowCount, 2);
});

test("a job re-added under a running job's key replaces it without reading the queue", async () => {
  const { rows: [running] } = await db.pool.query<{ key: string }>(
    "select key from graphile_worker._private_jobs where locked_at is not null order by id limit 1");
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("begin");
    const before = await jobScans(client);
    await client.query("select chat_private.add_job('chat_run', '{}'::json, p_job_key => $1, p_max_attempts => 1)", [running!.key]);
    assert.is((await jobScans(client)) - before, 0);
    // The running job lost its key (it will not be retried); a new one holds it.
    const { rows } = await client.query<{ locked: boolean }>(
      "select locked_at is not null as locked from graphile_worker._private_jobs where key = $1", [running!.key]);
    assert.equal(rows, [{ locked: false }]);
    await client.query("rollback");
  } finally {
    await client.end();
  }
});

test("chatd's SQL adds jobs only through chat_private.add_job", async () => {
  const { rows } = await db.pool.query<{ name: string }>(
    `select p.oid::regprocedure::text as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('chat_public', 'chat_private') and p.prosrc ilike '%graphile_worker.add_job%' order by 1`);
  assert.equal(rows.map((row) => row.name), ["chat_private.add_job(text,json,text,timestamp with time zone,integer)"]);
});

test.run();
