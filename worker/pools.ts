// Where a worker process opens its database connections, all in this one place: the task pool (chat runs, deltas,
// heartbeats, sweeps, batch tasks, metrics), Graphile Worker's queue pool, and the LISTEN connection of
// loop/listener.ts. Their sum is the pool size (`--pool-size`, CHATD_WORKER_POOL_SIZE; default 32), whatever the
// concurrency: a run holds a connection only for the statement it sends, never while a model streams or a tool runs,
// so turns in flight wait for a connection in the task pool instead of needing one each.
import type pg from "pg";
import type { Logger } from "../src/log.ts";
import { withStartupSettings } from "../src/db/connection-string.ts";
import { createPool, type DatabaseHealth } from "../src/db/pool.ts";

export const DEFAULT_POOL_SIZE = 32;
/** The LISTEN connection, two queue connections (its LISTEN and a fetch or completion) and one for the tasks. */
export const MIN_POOL_SIZE = 4;

export interface WorkerPools {
  /** Every statement of the tasks. */
  pool: pg.Pool;
  /** Graphile Worker's (job fetches and completions, which it retries on a new connection after a connection error). */
  queuePool: pg.Pool;
  /** The LISTEN connection's URL (one connection; never through a transaction-mode pooler, src/db/pooler.ts). */
  listenUrl: string;
  /** Turns on the statement retry of the queue pool (after Graphile Worker's start-up migration, which is not one
   * statement per checkout). */
  startRetrying(): void;
  end(): Promise<void>;
}

/** The pool size from CHATD_WORKER_POOL_SIZE, else the default. */
export function poolSizeFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CHATD_WORKER_POOL_SIZE;
  return raw == null || raw === "" ? DEFAULT_POOL_SIZE : checkPoolSize(Number(raw), "CHATD_WORKER_POOL_SIZE");
}

export function checkPoolSize(size: number, source = "pool size"): number {
  if (!Number.isInteger(size) || size < MIN_POOL_SIZE || size > 10_000) {
    throw new RangeError(`${source}: an integer from ${MIN_POOL_SIZE} to 10000 is required (got ${String(size)})`);
  }
  return size;
}

/** `sessionUrl` serves what needs a session: the LISTEN connection and Graphile Worker's queue pool, whose LISTEN is
 * one of its connections (the same as `databaseUrl` unless a transaction-mode pooler serves the task pool). */
export function createWorkerPools(databaseUrl: string, sessionUrl: string, poolSize: number, log: Logger,
  health: DatabaseHealth): WorkerPools {
  const size = checkPoolSize(poolSize);
  // Graphile Worker fetches into its local queue one batch at a time and batches completions: a few suffice.
  const queueSize = Math.max(2, Math.min(4, Math.floor(size / 8)));
  let retrying = false;
  const pool = createPool({ connectionString: databaseUrl, max: size - queueSize - 1, pooled: true }, log, "worker", { health });
  // Graphile Worker's fetches and completions are few statements sent with parameters over and over; PostgreSQL makes
  // a custom plan for each of a connection's first five executions, and again after every invalidation (an analyze
  // of its growing jobs table), which cost more than the generic plan they end up with (`npm run bench:alternate --
  // <previous main> e2e`, PostgreSQL CPU per turn). Without sequential scans: a generic plan estimates ten rows for
  // the unnest of a job-id array, and would join a batch of completions to the jobs table by reading all of it while
  // it holds fewer than about a thousand jobs (as chat_private.add_job in sql/010 says of add_jobs). A startup
  // setting, as the role is (src/db/run-time-roles.ts): the session URL is never a transaction-mode pooler's.
  const queuePool = createPool({
    connectionString: withStartupSettings(sessionUrl, { plan_cache_mode: "force_generic_plan", enable_seqscan: "off" }),
    max: queueSize }, log, "queue", { health, retryStatements: () => retrying });
  return {
    pool, queuePool, listenUrl: sessionUrl,
    startRetrying: () => {
      retrying = true;
    },
    async end() {
      await Promise.all([pool.end(), queuePool.end()]);
    },
  };
}
