// Batch jobs. `batch_validate` runs the full src/structured admission check on a batch's stored schema before any
// item starts (the SQL and GraphQL paths share it with the CLI, which also checks before submitting), then hands
// the verdict to SQL, which starts dispatch or fails the batch. `batch_cancel` interrupts the running items of a
// canceled batch, each in its own chat transition: the cancel function holds the batch lock and must not lock
// chats (lock order: chat, then batch). Both are idempotent, so a job re-enqueued after a crash is harmless.
import type { Task } from "graphile-worker";
import type pg from "pg";
import { isConnectionError } from "../src/db/pool.ts";
import type { Logger } from "../src/log.ts";
import { observeValidation } from "../src/metrics.ts";
import { validateResponseFormat } from "../src/structured/index.ts";

export interface BatchTaskDeps {
  pool: pg.Pool;
  log: Logger;
}

const batchIdOf = (payload: unknown): string | undefined => {
  const id = (payload as { batch_id?: unknown } | null)?.batch_id;
  return typeof id === "string" ? id : undefined;
};

/** The verdict on a stored json_schema envelope: null when valid, else a sanitized reason (field: detail). */
export function schemaVerdict(envelopeText: string): string | null {
  const started = performance.now();
  const result = validateResponseFormat(`{"type":"json_schema","json_schema":${envelopeText}}`);
  observeValidation((performance.now() - started) / 1000);
  if (result.ok) return null;
  return `invalid response_format: ${result.errors.slice(0, 8).map((e) => `${e.field}: ${e.detail}`).join("; ")}`;
}

export function makeBatchValidateTask({ pool, log }: BatchTaskDeps): Task {
  return async (payload) => {
    const batchId = batchIdOf(payload);
    if (batchId == null) return;
    const { rows } = await pool.query<{ status: string; envelope: string }>(
      "select status::text, response_format::text as envelope from chat_public.batches where id = $1", [batchId]);
    const batch = rows[0];
    if (batch == null || batch.status !== "validating") return;
    const error = schemaVerdict(batch.envelope);
    const { rows: verdict } = await pool.query<{ status: string }>(
      "select chat_private.finish_batch_validation($1, $2)::text as status", [batchId, error]);
    log.info({ batch_id: batchId, status: verdict[0]?.status, error }, "batch schema validated");
  };
}

export function makeBatchCancelTask({ pool, log }: BatchTaskDeps): Task {
  return async (payload) => {
    const batchId = batchIdOf(payload);
    if (batchId == null) return;
    const { rows } = await pool.query<{ request_id: string; line: number }>(
      `select structured_output_request_id as request_id, line from chat_public.batch_items
       where batch_id = $1 and status = 'running' and structured_output_request_id is not null order by line`, [batchId]);
    let canceled = 0;
    for (const row of rows) {
      try {
        await pool.query("select chat_private.operator_cancel_request($1, $2)", [row.request_id, "the batch was canceled"]);
        canceled += 1;
      } catch (error) {
        // SODON: the request finished on its own meanwhile; its receipt already ended the item.
        if ((error as { code?: unknown }).code !== "SODON") throw error;
      }
    }
    log.info({ batch_id: batchId, interrupted: canceled }, "canceled batch: running items interrupted");
  };
}

/** Part of the worker's sweep: re-enqueues batch jobs a crashed worker left locked (see sql/095_batches.sql). */
export async function sweepBatches(pool: pg.Pool, log: Logger): Promise<void> {
  try {
    const { rows } = await pool.query<{ n: number }>("select chat_private.sweep_batches() as n");
    if ((rows[0]?.n ?? 0) > 0) log.info({ batches: rows[0]?.n }, "batch sweep re-enqueued or dispatched batches");
  } catch (error) {
    // A lost database is logged once per outage by the pool (src/db/pool.ts).
    if (!isConnectionError(error)) log.error({ err: error }, "batch sweep failed");
  }
}
