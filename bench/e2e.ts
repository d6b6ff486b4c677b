// `npm run bench:e2e`: structured turns through the real database and worker processes with the scripted
// provider (zero model latency; not a real model). Turn shape: a user message with a schema → one workspace
// tool call → its result → a valid finalization → the receipt. Prints turns/s at concurrency 8, p50/p99 from
// request commit to receipt commit, the same at concurrency 1, and, measured in the same run, the commit rate of a
// trivial INSERT (the physical ceiling), plus transactions per turn, and the SQL floor: the same turn's statements
// replayed by pgbench with no worker (bench/sql-floor.ts), which bounds what any worker could reach on this machine.
// Beside the worker's CPU per turn it prints PostgreSQL's (every server process, from /proc: bench/server-cost.ts)
// for the measured runs and for the floor, and a profile of a separate instrumented run: the top ten statements
// (pg_stat_statements, nested ones included) and functions (track_functions) by time per turn.
// Arguments: turns at concurrency 8 (400), turns at concurrency 1 (50), turns of the profiled run (200);
// CHATD_BENCH_PROFILE_TOP lengthens the profile's lists (10).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { sqlFloor, type CapturedStatement } from "./sql-floor.ts";
import { CLIENT_TURN, createStructuredChats, waitForReceipts } from "./structured-turn.ts";
import { backendsGone, profileRows, serverCpuMs, startProfiling } from "./server-cost.ts";
import { benchDatabase, benchFolder, benchWorkspaces, commitRate, percentile, printTable } from "./support.ts";

const TURNS = Number(process.argv[2] ?? 400);
const SERIAL_TURNS = Number(process.argv[3] ?? 50);
const PROFILE_TURNS = Number(process.argv[4] ?? 200);

function startWorker(url: string, workspaces: string, concurrency: number, statsFile: string): ChildProcess {
  // CHATD_BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the worker process.
  const nodeArgs = (process.env.CHATD_BENCH_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "");
  return spawn(process.execPath, [...nodeArgs, join(projectRoot, "bench", "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: url, CHATD_WORKSPACES_ROOT: workspaces, CHATD_BENCH_CONCURRENCY: String(concurrency),
      CHATD_BENCH_STATS_FILE: statsFile },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

interface WorkerStats {
  roundTrips: number;
  cpuMs: number;
  statements: Record<string, CapturedStatement>;
}

/** The worker's round trips and CPU so far (bench/worker-process.ts writes them on SIGUSR2). */
async function workerStats(child: ChildProcess, file: string): Promise<WorkerStats> {
  rmSync(file, { force: true });
  child.kill("SIGUSR2");
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 5));
  return JSON.parse(readFileSync(file, "utf8")) as WorkerStats;
}

/** Jobs added to Graphile Worker's queue so far (its id sequence: exact, not transactional). */
async function jobsAdded(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string | null }>(
    "select pg_sequence_last_value(pg_get_serial_sequence('graphile_worker._private_jobs', 'id')::regclass) as n");
  return Number(rows[0]!.n ?? 0);
}

async function stopWorker(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function latencies(pool: pg.Pool): Promise<{ ms: number[]; failed: number }> {
  const { rows } = await pool.query<{ ms: number; status: string }>(
    `select extract(epoch from (m.created_at - r.created_at)) * 1000 as ms, r.status::text as status
     from chat_public.structured_output_requests r join chat_public.chat_messages m on m.id = r.receipt_message_id`);
  return { ms: rows.map((r) => Number(r.ms)).sort((a, b) => a - b), failed: rows.filter((r) => r.status !== "succeeded").length };
}

/** Transaction ids assigned so far: every transaction that wrote, committed or not. Unlike pg_stat_database's
 * counters, which other backends flush at most once a second, this is exact the moment a run ends. */
async function writeTransactions(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>("select pg_snapshot_xmax(pg_current_snapshot())::text as n");
  return Number(rows[0]!.n);
}

/** Where the database time of a turn goes: a separate run of `turns` turns with a new worker while the database
 * times every statement and function (bench/server-cost.ts). Only this run is instrumented: timing every call costs
 * the server a good part of its throughput, which the measured runs must not pay. */
async function profile(pool: pg.Pool, url: string, user: string, turns: number): Promise<[string, string][]> {
  await pool.query("delete from chat_public.chats");
  const statements = await startProfiling(pool);
  // New sessions, the worker's and the client's: the database's settings apply from a session's start.
  const clients = new pg.Pool({ connectionString: url, max: 4 });
  const statsFile = join(scratch, "profile.json");
  const worker = startWorker(url, workspaces, 8, statsFile);
  try {
    await createStructuredChats(clients, user, turns);
    await waitForReceipts(pool);
  } finally {
    await stopWorker(worker);
    await clients.end();
  }
  return [["profile: top statements (ms per turn, nested included) and functions, a separate profiled run", `${turns} turns`],
    ...await profileRows(pool, turns, statements, Number(process.env.CHATD_BENCH_PROFILE_TOP ?? 10))];
}

const scratch = benchFolder("chatd-bench-e2e-");
const workspaces = benchWorkspaces(join(scratch, "workspaces"));

const results: [string, string][] = [];
for (const [label, concurrency, turns, serial] of [["c8", 8, TURNS, false], ["c1", 1, SERIAL_TURNS, true]] as const) {
  const db = await benchDatabase(`e2e_${label}`);
  const pool = new pg.Pool({ connectionString: db.url, max: 6 });
  // An idle connection ended by the server must fail a query, not the whole run.
  pool.on("error", (error) => console.error(`bench:e2e: idle connection failed: ${error.message}`));
  try {
    await pool.query("update chat_private.experiments set enabled = true");
    const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('bench') returning id")).rows[0]!.id;
    if (!serial) results.push([`trivial INSERT commits/s (8 connections)`, (await commitRate(db.url, 8, 2000)).toFixed(0)]);
    const statsFile = join(scratch, `${label}.json`);
    const worker = startWorker(db.url, workspaces, concurrency, statsFile);
    // Warm up (module load, first compile, connection pools) before measuring.
    await createStructuredChats(pool, user, 4);
    await waitForReceipts(pool);
    await pool.query("delete from chat_public.chats");
    const writesBefore = await writeTransactions(pool);
    const jobsBefore = await jobsAdded(pool);
    const workerBefore = await workerStats(worker, statsFile);
    const serverBefore = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) : NaN;
    const started = performance.now();
    if (serial) {
      for (let i = 0; i < turns; i++) {
        await createStructuredChats(pool, user, 1);
        await waitForReceipts(pool);
      }
    } else {
      await createStructuredChats(pool, user, turns);
      await waitForReceipts(pool);
    }
    const seconds = (performance.now() - started) / 1000;
    const serverMs = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) - serverBefore : NaN;
    const writes = (await writeTransactions(pool)) - writesBefore;
    const jobs = (await jobsAdded(pool)) - jobsBefore;
    const workerAfter = await workerStats(worker, statsFile);
    await stopWorker(worker);
    const { ms, failed } = await latencies(pool);
    const rate = turns / seconds;
    if (!serial) {
      const floorBefore = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) : NaN;
      const floor = sqlFloor(db.url, user, CLIENT_TURN, workerAfter.statements, { clients: concurrency, seconds: 8 });
      // The bench's own connections stay; pgbench's, which it names by their application, end with it.
      if (db.postmasterPid != null) await backendsGone(pool, db.postmasterPid, { application: "pgbench" });
      const floorMs = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) - floorBefore : NaN;
      results.push(["SQL floor: this turn's statements replayed by pgbench, no worker, turns/s", "skipped" in floor
        ? `skipped: ${floor.skipped}`
        : `${floor.turnsPerSecond.toFixed(1)} (the worker reached ${(rate / floor.turnsPerSecond).toFixed(2)} of it)`]);
      if (!("skipped" in floor)) results.push(["SQL floor: PostgreSQL CPU ms per turn", (floorMs / floor.turns).toFixed(2)]);
      results.push(...await profile(pool, db.url, user, PROFILE_TURNS));
    }
    results.push(
      [`concurrency ${concurrency}: structured turns`, `${turns} (${failed} not succeeded)`],
      [`concurrency ${concurrency}: turns/s`, rate.toFixed(1)],
      [`concurrency ${concurrency}: request→receipt p50 / p99 ms`, `${percentile(ms, 50).toFixed(1)} / ${percentile(ms, 99).toFixed(1)}`],
      [`concurrency ${concurrency}: transactions that wrote, per turn (all sessions)`, (writes / turns).toFixed(1)],
      [`concurrency ${concurrency}: worker round trips per turn`, ((workerAfter.roundTrips - workerBefore.roundTrips) / turns).toFixed(1)],
      [`concurrency ${concurrency}: job-queue hops (jobs added) per turn`, (jobs / turns).toFixed(2)],
      [`concurrency ${concurrency}: PostgreSQL CPU ms per turn (all server processes)`, (serverMs / turns).toFixed(2)],
      [`concurrency ${concurrency}: worker CPU ms per turn`, ((workerAfter.cpuMs - workerBefore.cpuMs) / turns).toFixed(2)],
    );
  } finally {
    await pool.end();
    await db.close();
  }
}
console.log(`bench:e2e — scripted provider (zero model latency), ${new Date().toISOString()}, load ${(await import("node:os")).loadavg().map((n) => n.toFixed(2)).join(" ")}`);
printTable(results);
