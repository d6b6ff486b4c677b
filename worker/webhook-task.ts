// `webhook_deliver`: one attempt of one delivery. The delivery row (written in the receipt's transaction, sql/150)
// holds the exact body and the event id; this task signs with the endpoint's current secrets, sends with a bounded
// wait, and hands the outcome to chat_private.webhook_record_attempt, which owns what follows (delivered, retried
// at an explicit time, failed, endpoint disabled on 410). A crash mid-send leaves the job to Graphile Worker's own
// retry: at least once, never lost.
import type { Task } from "graphile-worker";
import type pg from "pg";
import { isConnectionError } from "../src/db/pool.ts";
import type { Logger } from "../src/log.ts";
import { sendWebhook } from "../src/webhooks/send.ts";
import { signedHeaders } from "../src/webhooks/signing.ts";

export interface WebhookTaskDeps {
  pool: pg.Pool;
  log: Logger;
  /** Refuse private targets (NODE_ENV=production). */
  guard: boolean;
  userAgent: string;
  timeoutMs?: number;
}

interface Pending {
  event_id: string;
  url: string;
  body: string;
  secrets: string[];
  attempts: number;
}

export function makeWebhookDeliverTask(deps: WebhookTaskDeps): Task {
  return async (payload) => {
    const id = (payload as { delivery_id?: unknown } | null)?.delivery_id;
    if (typeof id !== "number" && typeof id !== "string") return;
    const { rows } = await deps.pool.query<Pending>("select * from chat_private.webhook_delivery_for_send($1)", [id]);
    const pending = rows[0];
    if (!pending) return;
    const headers = signedHeaders(pending.secrets, pending.event_id, new Date(), pending.body);
    const attempt = await sendWebhook(pending.url, pending.body, headers, {
      guard: deps.guard, userAgent: deps.userAgent, ...(deps.timeoutMs != null ? { timeoutMs: deps.timeoutMs } : {}),
    });
    const { rows: [outcome] } = await deps.pool.query<{ outcome: string }>(
      "select chat_private.webhook_record_attempt($1, $2, $3, $4) as outcome",
      [id, attempt.statusCode, attempt.error, attempt.retryAfterSeconds]);
    deps.log.info({ delivery_id: id, event_id: pending.event_id, attempt: pending.attempts + 1, status: attempt.statusCode,
      outcome: outcome?.outcome }, "webhook attempt");
  };
}

/** The periodic sweep's part for webhooks: re-enqueues overdue deliveries (sql/150 chat_private.webhook_sweep). */
export async function sweepWebhooks(pool: pg.Pool, log: Logger): Promise<void> {
  try {
    const { rows } = await pool.query<{ n: number }>("select chat_private.webhook_sweep() as n");
    if ((rows[0]?.n ?? 0) > 0) log.info({ deliveries: rows[0]?.n }, "webhook sweep re-enqueued overdue deliveries");
  } catch (error) {
    // A lost database is logged once per outage by the pool (src/db/pool.ts).
    if (!isConnectionError(error)) log.error({ err: error }, "webhook sweep failed");
  }
}
