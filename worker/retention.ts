// `data_retention`: deletes what the retention settings say is due (sql/160 run_retention), on Graphile Worker's
// cron (every RETENTION_CRON; one worker runs each tick, whichever fetches the job). Every step is its own short
// transaction deleting at most retention_batch_size chats, so a client never waits on retention for long, and
// rows a client holds are skipped until a later step. With every rule off (the default) a tick costs one query.
import { parseCronItems, type ParsedCronItem, type Task } from "graphile-worker";
import type pg from "pg";
import type { Logger } from "../src/log.ts";

export const RETENTION_TASK = "data_retention";
const RETENTION_CRON = "*/10 * * * *";
/** Steps per tick: a large backlog is worked off over several ticks instead of one long job. */
const MAX_STEPS = 200;

export interface RetentionReport {
  chats: number;
  batches: number;
  deleted_request_ids: number;
}

/** Runs retention steps until nothing is due (or MAX_STEPS); returns the totals. */
export async function runRetention(pool: pg.Pool, maxSteps = MAX_STEPS): Promise<RetentionReport> {
  const total: RetentionReport = { chats: 0, batches: 0, deleted_request_ids: 0 };
  for (let step = 0; step < maxSteps; step += 1) {
    const { rows } = await pool.query<{ report: RetentionReport }>("select chat_private.run_retention() as report");
    const report = rows[0]!.report;
    total.chats += report.chats;
    total.batches += report.batches;
    total.deleted_request_ids += report.deleted_request_ids;
    if (report.chats + report.batches + report.deleted_request_ids === 0) break;
  }
  return total;
}

export function makeRetentionTask(deps: { pool: pg.Pool; log: Logger }): Task {
  return async () => {
    const total = await runRetention(deps.pool);
    if (total.chats + total.batches + total.deleted_request_ids > 0) deps.log.info(total, "retention deleted due data");
  };
}

/** The cron entry; a tick missed while no worker ran is not made up (the next one finds the same rows due). */
export const retentionCronItems = (): ParsedCronItem[] => parseCronItems([{
  task: RETENTION_TASK, match: RETENTION_CRON, identifier: RETENTION_TASK,
  options: { backfillPeriod: 0, maxAttempts: 1, jobKey: RETENTION_TASK, jobKeyMode: "replace" },
}]);
