// `npm run bench:inflight`: many slow turns in flight on one worker process. Each turn is one model step that takes
// 500 ms (the scripted provider's delay: not a real model) and then finishes. For 64, 256 and 1024 turns in flight
// (the worker's --concurrency), all runnable when the worker starts, it prints turns/s against the ideal (in flight ÷
// turn latency) and against the CPU-bound rate of the same turn without model latency, p50/p99 of the time to each
// turn's commit, PostgreSQL's CPU per turn (all its processes, /proc) beside the worker's, the worker's peak database
// connections (pg_stat_activity) and its RSS growth per turn in flight. Then the same batch again on the same worker:
// the first batch runs in a process whose code V8 is still compiling (interpreted and baseline code), which about
// doubles the worker's CPU per turn against a worker that has run a few thousand turns (a long-lived one).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { processCpuMs, serverCpuMs } from "./server-cost.ts";
import { benchDatabase, createScriptedChats, percentile, printTable } from "./support.ts";

const STEP_MS = 500;
const SIZES = (process.argv[2] ?? "64,256,1024").split(",").map(Number);
const APP = "chatd-bench-inflight";

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

function startWorker(url: string, concurrency: number): ChildProcess {
  return spawn(process.execPath, [join(projectRoot, "bench", "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: url, CHATD_WORKSPACES_ROOT: tmpdir(), CHATD_BENCH_CONCURRENCY: String(concurrency),
      PGAPPNAME: APP },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

async function stopWorker(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

interface Run {
  seconds: number;
  /** Milliseconds from the commit that made the turns runnable to each turn's commit, sorted. */
  done: number[];
  peakConnections: number;
  rssPerTurn: number;
  /** CPU milliseconds per turn of PostgreSQL (all its processes) and of the worker process. */
  serverMsPerTurn: number;
  workerMsPerTurn: number;
  /** The same batch again on the same worker process, its code now compiled for this load (see the file's top). */
  again?: { rate: number; serverMsPerTurn: number; workerMsPerTurn: number };
}

async function untilAllWaiting(pool: pg.Pool, onPoll: () => Promise<void> = async () => undefined): Promise<void> {
  for (;;) {
    await onPoll();
    const { rows } = await pool.query<{ open: number }>("select count(*)::int as open from chat_public.chats where status <> 'waiting'");
    if (rows[0]!.open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The same batch once more on the worker of a measured run: throughput and CPU per turn. */
async function runAgain(pool: pg.Pool, db: { postmasterPid?: number }, worker: ChildProcess, user: string, count: number,
  delayMs: number): Promise<NonNullable<Run["again"]>> {
  await pool.query("delete from chat_public.chats");
  const serverBefore = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) : NaN;
  const workerBefore = processCpuMs(worker.pid!);
  await createScriptedChats(pool, user, count, delayMs, "done");
  const started = performance.now();
  await untilAllWaiting(pool);
  const seconds = (performance.now() - started) / 1000;
  return { rate: count / seconds, serverMsPerTurn: (db.postmasterPid != null ? serverCpuMs(db.postmasterPid) - serverBefore : NaN) / count,
    workerMsPerTurn: (processCpuMs(worker.pid!) - workerBefore) / count };
}

/** Runs `count` turns with `delayMs` model steps on a fresh database and a warmed-up worker at concurrency `count`;
 * with `again`, the same batch once more on that worker. */
async function measure(count: number, delayMs: number, again = false): Promise<Run> {
  const db = await benchDatabase(`inflight_${count}_${delayMs}`);
  const pool = new pg.Pool({ connectionString: db.url, max: 3 });
  pool.on("error", (error) => console.error(`bench:inflight: idle connection failed: ${error.message}`));
  const worker = startWorker(db.url, count);
  try {
    const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('bench') returning id")).rows[0]!.id;
    // Warm up (module load, first compile, connection pools) before measuring.
    await createScriptedChats(pool, user, 8, 0, "done");
    await untilAllWaiting(pool);
    await pool.query("delete from chat_public.chats");
    const idleRss = rssBytes(worker.pid!);
    let peakConnections = 0;
    let peakRss = idleRss;
    const serverBefore = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) : NaN;
    const workerBefore = processCpuMs(worker.pid!);
    // One transaction: every turn becomes runnable at its commit.
    await createScriptedChats(pool, user, count, delayMs, "done");
    const startedAt = (await pool.query<{ now: Date }>("select clock_timestamp() as now")).rows[0]!.now;
    const started = performance.now();
    await untilAllWaiting(pool, async () => {
      const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where application_name = $1", [APP]);
      peakConnections = Math.max(peakConnections, rows[0]!.n);
      peakRss = Math.max(peakRss, rssBytes(worker.pid!));
    });
    const seconds = (performance.now() - started) / 1000;
    const serverMs = db.postmasterPid != null ? serverCpuMs(db.postmasterPid) - serverBefore : NaN;
    const workerMs = processCpuMs(worker.pid!) - workerBefore;
    const { rows } = await pool.query<{ ms: number }>(
      `select extract(epoch from (created_at - $1::timestamptz)) * 1000 as ms from chat_public.chat_messages
       where role = 'assistant' and kind = 'message' order by 1`, [startedAt]);
    return { seconds, done: rows.map((r) => Number(r.ms)), peakConnections, rssPerTurn: (peakRss - idleRss) / count,
      serverMsPerTurn: serverMs / rows.length, workerMsPerTurn: workerMs / rows.length,
      ...(again ? { again: await runAgain(pool, db, worker, user, count, delayMs) } : {}) };
  } finally {
    await stopWorker(worker);
    await pool.end();
    await db.close();
  }
}

const results: [string, string][] = [];
const cpuBound = await measure(256, 0);
const cpuRate = cpuBound.done.length / cpuBound.seconds;
results.push(["CPU-bound: the same turn without model latency, 256 in flight, turns/s", cpuRate.toFixed(1)],
  ["CPU-bound: PostgreSQL / worker CPU ms per turn", `${cpuBound.serverMsPerTurn.toFixed(2)} / ${cpuBound.workerMsPerTurn.toFixed(2)}`]);
for (const size of SIZES) {
  const run = await measure(size, STEP_MS, true);
  const rate = run.done.length / run.seconds;
  const ideal = size / (STEP_MS / 1000);
  results.push(
    [`${size} in flight: turns`, `${run.done.length} in ${run.seconds.toFixed(2)} s`],
    [`${size} in flight: turns/s (ideal ${ideal.toFixed(0)}, CPU-bound ${cpuRate.toFixed(0)})`,
      `${rate.toFixed(1)} (${((rate / Math.min(ideal, cpuRate)) * 100).toFixed(0)}% of the lower bound)`],
    [`${size} in flight: runnable → commit p50 / p99 ms`, `${percentile(run.done, 50).toFixed(0)} / ${percentile(run.done, 99).toFixed(0)}`],
    [`${size} in flight: PostgreSQL / worker CPU ms per turn`, `${run.serverMsPerTurn.toFixed(2)} / ${run.workerMsPerTurn.toFixed(2)}`],
    [`${size} in flight: peak worker connections`, String(run.peakConnections)],
    [`${size} in flight: worker RSS growth per turn in flight`, `${(run.rssPerTurn / 1024).toFixed(1)} KiB`],
    [`${size} in flight, again on the same worker: turns/s`, run.again!.rate.toFixed(1)],
    [`${size} in flight, again on the same worker: PostgreSQL / worker CPU ms per turn`,
      `${run.again!.serverMsPerTurn.toFixed(2)} / ${run.again!.workerMsPerTurn.toFixed(2)}`],
  );
}
console.log(`bench:inflight — scripted provider (${STEP_MS} ms steps, not a real model), ${new Date().toISOString()}, load ${loadavg().map((n) => n.toFixed(2)).join(" ")}`);
printTable(results);
