// `data_retention`: deletes what the retention settings say is due (sql/160 run_retention). Every worker adds the
// job every RETENTION_INTERVAL_MS under one job key (Graphile Worker's add_job, keeping the run_at of a job already
// waiting), so one job at a time is pending across workers and whichever worker fetches it runs it. Every step is its
// own short transaction deleting at most retention_batch_size chats, so a client never waits on retention for long,
// and rows a client holds are skipped until a later step. With every rule off (the default) a run costs one query.
// (Not Graphile Worker's cron: its scheduler fails on the worker's queue pool, whose connect() wraps pg-pool's.)
import type { Task } from "graphile-worker";
import type pg from "pg";
import { isConnectionError } from "../src/db/pool.ts";
import type { Logger } from "../src/log.ts";

export const RETENTION_TASK = "data_retention";
const RETENTION_INTERVAL_MS = 10 * 60_000;
/** Steps per tick: a large backlog is worked off over several ticks instead of one long job. */
const MAX_STEPS = 200;

/** What one run_retention step (and runRetention, summed) deleted, per rule. */
export interface RetentionReport {
  chats: number;
  batches: number;
  deleted_request_ids: number;
  idempotency_keys: number;
  webhook_deliveries: number;
  failed_jobs: number;
}

const RULES = ["chats", "batches", "deleted_request_ids", "idempotency_keys", "webhook_deliveries", "failed_jobs"] as const;
const deletedAny = (report: RetentionReport) => RULES.some((rule) => report[rule] > 0);

/** Runs retention steps until nothing is due (or MAX_STEPS); returns the totals. */
export async function runRetention(pool: pg.Pool, maxSteps = MAX_STEPS): Promise<RetentionReport> {
  const total = Object.fromEntries(RULES.map((rule) => [rule, 0])) as unknown as RetentionReport;
  for (let step = 0; step < maxSteps; step += 1) {
    const { rows } = await pool.query<{ report: RetentionReport }>("select chat_private.run_retention() as report");
    const report = rows[0]!.report;
    for (const rule of RULES) total[rule] += report[rule];
    if (!deletedAny(report)) break;
  }
  return total;
}

export function makeRetentionTask(deps: { pool: pg.Pool; log: Logger }): Task {
  return async () => {
    const total = await runRetention(deps.pool);
    if (deletedAny(total)) deps.log.info(total, "retention deleted due data");
  };
}

/** Adds the job now and every RETENTION_INTERVAL_MS; returns the function that stops adding it. */
export function scheduleRetention(pool: pg.Pool, log: Logger, intervalMs = RETENTION_INTERVAL_MS): () => void {
  const add = () => pool.query(
    "select graphile_worker.add_job($1, '{}'::json, job_key := $1, job_key_mode := 'preserve_run_at', max_attempts := 1)",
    [RETENTION_TASK]).then(() => undefined, (error: unknown) => {
    // During an outage the next interval adds it; the outage has its own log line.
    if (!isConnectionError(error)) log.warn({ err: error }, "could not schedule the data_retention job");
  });
  void add();
  const timer = setInterval(() => void add(), intervalMs);
  return () => clearInterval(timer);
}
