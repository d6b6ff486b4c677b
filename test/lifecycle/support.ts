// Helpers for the data-lifecycle tests: what is left of a set of chats in every table that can name one.
import type { TestDatabase } from "../support/db.ts";

/**
 * Rows naming any of `chatIds`, per table: every base table with a `chat_id` or `parent_chat_id` column (read from
 * information_schema, so a table added later is covered), message_internals through the message ids given, the
 * idempotency results and Graphile Worker's jobs through their JSON, and webhook deliveries about the structured
 * requests given (their subject is the Response id, resp_<request id without dashes>). Only non-zero counts are
 * returned.
 */
export async function leftovers(db: TestDatabase, chatIds: string[], messageIds: string[] = [],
  requestIds: string[] = []): Promise<Record<string, number>> {
  const { rows: columns } = await db.pool.query<{ relation: string; column_name: string }>(
    `select format('%I.%I', c.table_schema, c.table_name) as relation, c.column_name
     from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where t.table_type = 'BASE TABLE' and c.column_name in ('chat_id', 'parent_chat_id', 'id')
       and c.table_schema not in ('pg_catalog', 'information_schema') and c.data_type = 'uuid'
       and (c.column_name <> 'id' or c.table_name = 'chats')`);
  if (columns.length < 6) throw new Error(`expected the chat tables, found ${columns.map((c) => c.relation).join(", ")}`);
  const counts: Record<string, number> = {};
  const add = (name: string, n: number) => {
    if (n > 0) counts[name] = n;
  };
  for (const { relation, column_name } of columns) {
    const { rows } = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from ${relation} where ${column_name} = any($1::uuid[])`, [chatIds]);
    add(`${relation}.${column_name}`, rows[0]!.n);
  }
  const one = async (name: string, sql: string, params: unknown[]) =>
    add(name, (await db.pool.query<{ n: number }>(sql, params)).rows[0]!.n);
  await one("chat_private.message_internals", "select count(*)::int as n from chat_private.message_internals where message_id = any($1::bigint[])", [messageIds]);
  await one("chat_private.idempotency_keys", "select count(*)::int as n from chat_private.idempotency_keys where result ->> 'chat_id' = any($1)", [chatIds]);
  await one("chat_private.webhook_deliveries", "select count(*)::int as n from chat_private.webhook_deliveries where subject_id = any($1)",
    [requestIds.map((id) => `resp_${id.replaceAll("-", "")}`)]);
  await one("graphile_worker.jobs", "select count(*)::int as n from graphile_worker._private_jobs where payload ->> 'chat_id' = any($1)", [chatIds]);
  return counts;
}

/** The tables `leftovers` reads by a chat column (to show that the check covers them). */
export async function chatTables(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.pool.query<{ relation: string }>(
    `select distinct format('%I.%I', c.table_schema, c.table_name) as relation from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where t.table_type = 'BASE TABLE' and c.column_name in ('chat_id', 'parent_chat_id') order by 1`);
  return rows.map((r) => r.relation);
}
