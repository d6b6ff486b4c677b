// Helpers for the batch tests: submitting batches as a user or operator, reading items, and driving item chats
// through the real worker transitions (no worker process) when a test needs exact control of each outcome.
import type { TestDatabase } from "../support/db.ts";
import { acquire, asUser, commitCandidate, finishTurn } from "../support/chats.ts";

export const envelope = (schema: object = { type: "object" }, name = "item") =>
  JSON.stringify({ type: "json_schema", json_schema: { name, schema } });

export const lines = (n: number, prompt = (i: number) => `item ${i}`) =>
  Array.from({ length: n }, (_, i) => ({ line: i + 1, content: [{ type: "text", text: prompt(i + 1) }] }));

export interface BatchRow {
  id: string;
  status: string;
  error: string | null;
  total_items: number;
  concurrency: number;
  finished_at: Date | null;
}

export interface ItemRow {
  line: number;
  status: string;
  chat_id: string | null;
  request_id: string | null;
  error_code: string | null;
  error_message: string | null;
  /** The concurrency slot a running item holds. */
  slot: number | null;
}

export async function createBatch(db: TestDatabase, userId: string, items: object[], options: {
  format?: string; concurrency?: number; key?: string; name?: string; model?: string;
} = {}): Promise<BatchRow> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<BatchRow>(
      `select * from chat_public.create_batch(response_format => $1, items => $2, name => $3, model_config_id => $4,
         concurrency => $5, idempotency_key => $6)`,
      [options.format ?? envelope(), JSON.stringify(items), options.name ?? null, options.model ?? "scripted",
        options.concurrency ?? 4, options.key ?? null]);
    return rows[0]!;
  });
}

export async function batch(db: TestDatabase, id: string): Promise<BatchRow> {
  const { rows } = await db.pool.query<BatchRow>("select * from chat_public.batches where id = $1", [id]);
  return rows[0]!;
}

export async function items(db: TestDatabase, id: string): Promise<ItemRow[]> {
  const { rows } = await db.pool.query<ItemRow>(
    `select line, status::text, chat_id, structured_output_request_id as request_id, error_code, error_message, slot
     from chat_public.batch_items where batch_id = $1 order by line`, [id]);
  return rows;
}

export async function statusCounts(db: TestDatabase, id: string): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ status: string; n: number }>(
    "select status::text, count(*)::int as n from chat_public.batch_items where batch_id = $1 group by 1", [id]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** What the batch_validate job does after src/structured's verdict. */
export async function validated(db: TestDatabase, id: string, error: string | null = null): Promise<string> {
  const { rows } = await db.pool.query<{ s: string }>("select chat_private.finish_batch_validation($1, $2)::text as s", [id, error]);
  return rows[0]!.s;
}

/** Ends an item's turn as a worker would: success with `valueJson` (exact text) or the given failure. */
export async function endItem(db: TestDatabase, chatId: string, outcome: { valueJson: string } | { code: string }): Promise<void> {
  let fence = await acquire(db, chatId);
  if ("valueJson" in outcome) {
    fence = await commitCandidate(db, fence, outcome.valueJson);
    await finishTurn(db, fence, null);
  } else {
    await finishTurn(db, fence, { status: "failed", code: outcome.code, message: `failed: ${outcome.code}` });
  }
}
