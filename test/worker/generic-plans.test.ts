// Statements a turn sends over and over run on generic plans: PostgreSQL would otherwise make a custom plan for each
// of a connection's first five executions of every statement, and again after each invalidation (an analyze of a
// growing table), at more cost than the generic plan saves (bench:e2e, PostgreSQL CPU per turn). Two owners: the
// SET clause of each turn entry point (its nested statements inherit the setting) and the worker's queue pool,
// whose connections carry Graphile Worker's statements, and plan them without sequential scans: a generic plan
// estimates ten elements for an array parameter and would read the whole jobs table to join a batch of job ids.
import pg from "pg";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DatabaseHealth } from "../../src/db/pool.ts";
import { createWorkerPools } from "../../worker/pools.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

/** The functions a structured turn enters from the client and the worker (one call each per transition). */
const TURN_ENTRY_POINTS = [
  "chat_public.create_chat(jsonb,text,text,text,text,jsonb,boolean,text)",
  "chat_public.send_chat_message(uuid,jsonb,text,text,text)",
  "chat_private.acquire_lease(uuid,text,integer)",
  "chat_private.turn_state(uuid)",
  "chat_private.commit_step(uuid,uuid,bigint,bigint,jsonb,jsonb,text[])",
  "chat_private.commit_step_and_finish_turn(uuid,uuid,bigint,bigint,jsonb,jsonb,jsonb,text[])",
  "chat_private.finish_turn(uuid,uuid,bigint,bigint,jsonb)",
  "chat_private.enter_requires_action(uuid,uuid,bigint,bigint,jsonb,integer)",
  "chat_private.finish_error(uuid,uuid,bigint,bigint,text,text)",
  "chat_private.finish_interruption(uuid,uuid,bigint,bigint,jsonb)",
  "chat_private.record_retry_state(uuid,uuid,bigint,bigint,jsonb)",
];

test("every turn entry point runs its statements on generic plans", async () => {
  const { rows } = await db.pool.query<{ name: string; config: string[] | null }>(
    "select f::regprocedure::text as name, p.proconfig as config from unnest($1::text[]) f join pg_proc p on p.oid = f::regprocedure",
    [TURN_ENTRY_POINTS]);
  assert.is(rows.length, TURN_ENTRY_POINTS.length);
  const without = rows.filter((row) => !(row.config ?? []).includes("plan_cache_mode=force_generic_plan")).map((row) => row.name);
  assert.equal(without, []);
});

test("the worker's queue pool connections use generic plans; the task pool keeps the server's default", async () => {
  const log = pino({ level: "silent" });
  const pools = createWorkerPools(db.url, db.url, 8, log, new DatabaseHealth(log));
  try {
    const queue = await pools.queuePool.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode");
    assert.is(queue.rows[0]!.mode, "force_generic_plan");
    // A second connection opened while the first is checked out gets the setting too.
    const [a, b] = [await pools.queuePool.connect(), await pools.queuePool.connect()];
    try {
      for (const client of [a, b]) assert.is((await client.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode")).rows[0]!.mode, "force_generic_plan");
    } finally {
      a.release();
      b.release();
    }
    assert.is((await pools.pool.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode")).rows[0]!.mode, "auto");
  } finally {
    await pools.end();
  }
});

test("Graphile Worker's batched completion on the queue pool finds its jobs by id, not by reading the queue", async () => {
  const setup = new pg.Client({ connectionString: db.url });
  await setup.connect();
  try {
    await setup.query("select graphile_worker.add_job('chat_run', '{}'::json, job_key := 'queued:' || i) from generate_series(1, 300) i");
    await setup.query("analyze graphile_worker._private_jobs");
  } finally {
    await setup.end();
  }
  const log = pino({ level: "silent" });
  const pools = createWorkerPools(db.url, db.url, 8, log, new DatabaseHealth(log));
  const client = await pools.queuePool.connect();
  try {
    const { rows: done } = await client.query<{ id: string }>("select id from graphile_worker._private_jobs order by id limit 3");
    await client.query("begin");
    const scans = async () => Number((await client.query<{ n: string }>(
      "select seq_scan as n from pg_stat_xact_user_tables where schemaname = 'graphile_worker' and relname = '_private_jobs'")).rows[0]!.n);
    const before = await scans();
    // The statement graphile-worker 0.18 sends for several completions at once (dist/sql/completeJobs.js).
    const completed = await client.query({ name: "complete_jobs/graphile_worker",
      text: "delete from \"graphile_worker\"._private_jobs as jobs\nusing unnest($1::bigint[]) n(n)\nwhere id = n",
      values: [done.map((row) => row.id)] });
    assert.is(completed.rowCount, 3);
    assert.is((await scans()) - before, 0);
    await client.query("rollback");
  } finally {
    client.release();
    await pools.end();
  }
});

test.run();
