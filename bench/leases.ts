// `npm run bench:leases -- [runs] [seconds] [lease_seconds]`: what keeping turns alive costs PostgreSQL. `runs` turns
// (default 256) in flight on one worker process at --concurrency `runs`, each one long model step (the scripted
// provider's delay, ten minutes: not a real model), so every run holds its lease throughout. A lease length after
// every lease is taken, pg_stat_statements counts for `seconds` (default 60) at `lease_seconds` (default 30, the
// production default): the lease renewal statements and all the worker's statements, per minute. Counts, not times, so a busy
// machine does not change them. `npm run bench:alternate -- <baseline checkout> leases 1` runs it beside another
// checkout (copy this file into its bench/ if it lacks it).
import { tmpdir } from "node:os";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { startProfiling } from "./server-cost.ts";
import { benchDatabase, createScriptedChats, printTable } from "./support.ts";

const RUNS = Number(process.argv[2] ?? 256);
const SECONDS = Number(process.argv[3] ?? 60);
const LEASE_SECONDS = Number(process.argv[4] ?? 30);
const STEP_MS = 600_000;

const db = await benchDatabase(`leases_${RUNS}`);
const pool = new pg.Pool({ connectionString: db.url, max: 2 });
pool.on("error", (error) => console.error(`bench:leases: idle connection failed: ${error.message}`));
let worker: ChildProcess | undefined;
try {
  if (!(await startProfiling(pool))) throw new Error("bench:leases counts with pg_stat_statements, which this server does not load");
  await pool.query(`insert into chat_private.settings (name, value, description) values ('lease_seconds', $1::text::jsonb, 'bench')
    on conflict (name) do update set value = excluded.value`, [String(LEASE_SECONDS)]);
  const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('bench') returning id")).rows[0]!.id;
  await createScriptedChats(pool, user, RUNS, STEP_MS, "slow");
  worker = spawn(process.execPath, [join(projectRoot, "bench", "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: db.url, CHATD_WORKSPACES_ROOT: tmpdir(), CHATD_BENCH_CONCURRENCY: String(RUNS) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (;;) {
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from chat_private.chat_leases");
    if (rows[0]!.n === RUNS) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // A lease length more: every run is past its start (settings, model config, first stream events) and beating.
  await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 1000));
  await pool.query("select pg_stat_statements_reset()");
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const { rows: [counts] } = await pool.query<{ renewals: string; worker: string; leases: number }>(
    `select coalesce(sum(s.calls) filter (where s.query ~ 'renew_lease'), 0) as renewals, coalesce(sum(s.calls), 0) as worker,
            (select count(*)::int from chat_private.chat_leases) as leases
     from pg_stat_statements s
     where s.toplevel and s.dbid = (select oid from pg_database where datname = current_database())
       and s.userid = 'chat_worker'::regrole::oid`);
  if (counts!.leases !== RUNS) throw new Error(`${counts!.leases} of ${RUNS} leases held at the end: a run did not stay in flight`);
  const perMinute = (n: string) => ((Number(n) * 60) / SECONDS).toFixed(1);
  console.log(`bench:leases — ${RUNS} runs in flight on one worker, lease_seconds ${LEASE_SECONDS}, counted for ${SECONDS} s, ` +
    new Date().toISOString());
  printTable([
    ["lease renewal statements per minute", perMinute(counts!.renewals)],
    ["  per run in flight", (Number(perMinute(counts!.renewals)) / RUNS).toFixed(2)],
    ["all the worker's statements per minute", perMinute(counts!.worker)],
  ]);
} finally {
  if (worker != null) {
    const exited = new Promise((resolve) => worker!.on("exit", resolve));
    worker.kill("SIGTERM");
    await exited;
  }
  await pool.end();
  await db.close();
}
