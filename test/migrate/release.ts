// The database of the previous release, built the way that release's `chatd migrate` built it: its migrations
// through node-pg-migrate, Graphile Worker's schema, then all of its sql/ files in one transaction with their
// checksums recorded. The files are test/fixtures/release-5823e57 (`git archive 5823e57 migrations sql`; two
// comment lines reworded), so that a clone without history can run the upgrade test.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestDatabase } from "../support/db.ts";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";
import { projectRoot } from "../../src/db/database.ts";

export const RELEASE = "5823e57";
const releaseDir = join(projectRoot, "test", "fixtures", `release-${RELEASE}`);

export async function installRelease(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("set client_min_messages = warning");
    await client.query("create schema if not exists chatd_meta");
    await runner({
      dbClient: client, dir: join(releaseDir, "migrations"), migrationsTable: "pgmigrations", migrationsSchema: "chatd_meta",
      direction: "up", count: Infinity, checkOrder: true, singleTransaction: true, noLock: true, log: () => {},
    });
    await runWorkerMigrations({ connectionString: databaseUrl, logger: new Logger(() => () => {}) });
    const dir = join(releaseDir, "sql");
    const files = readdirSync(dir).filter((name) => name.endsWith(".sql")).sort()
      .map((name) => ({ name, text: readFileSync(join(dir, name), "utf8") }));
    await client.query(`create table chatd_meta.repeatable_sql (
      name text primary key, sha256 text not null, applied_at timestamptz not null default now())`);
    await client.query("begin");
    for (const file of files) await client.query(file.text);
    for (const file of files) {
      await client.query("insert into chatd_meta.repeatable_sql (name, sha256) values ($1, $2)",
        [file.name, createHash("sha256").update(file.text).digest("hex")]);
    }
    await client.query("commit");
  } finally {
    await client.end();
  }
}

export interface Written {
  userId: string;
  receiptChat: string;
  inFlightChat: string;
  batchId: string;
  runningItemChat: string;
}

type Fence = { runner_id: string; history_version: string; generation_attempt: string };

/**
 * What the previous release's clients and worker wrote, through that release's own functions (raw SQL with its
 * signatures, so that later changes to the test helpers cannot change what the old release did).
 */
export async function writeWithRelease(db: TestDatabase, userName = "old-release"): Promise<Written> {
  const sql = db.pool;
  const userId = (await sql.query<{ id: string }>("insert into chat_public.users (name) values ($1) returning id", [userName])).rows[0]!.id;
  await sql.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  const asUser = <T extends pg.QueryResultRow>(text: string, values: unknown[]) => db.as("chat_user", userId,
    async (client) => (await client.query<T>(text, values)).rows[0]!, true);
  const content = (text: string) => JSON.stringify([{ type: "text", text }]);
  const format = JSON.stringify({ type: "json_schema", json_schema: { name: "report", schema: { type: "object" } } });
  const worker = {
    acquire: async (chatId: string) => (await sql.query<Fence>("select * from chat_private.acquire_lease($1, 'old-worker')", [chatId])).rows[0]!,
    candidate: async (chatId: string, fence: Fence, valueJson: string) => (await sql.query<Fence>(
      "select * from chat_private.commit_step($1, $2, $3, $4, $5, $6)",
      [chatId, fence.runner_id, fence.history_version, fence.generation_attempt,
        JSON.stringify([{ role: "assistant", content: [{ type: "tool-call", tool_call_id: "f1", tool_name: "coder_structured_output", args: {} }] }]),
        `{"steps": 1, "candidate": {"value": ${valueJson}, "step": 1, "message_index": 0}}`])).rows[0]!,
    finish: (chatId: string, fence: Fence) => sql.query("select chat_private.finish_turn($1, $2, $3, $4, null)",
      [chatId, fence.runner_id, fence.history_version, fence.generation_attempt]),
  };

  // A structured request that succeeded: its receipt carries the exact value text.
  const receiptChat = (await asUser<{ chat_id: string }>("select * from chat_public.create_chat(content => $1, response_format => $2)",
    [content("report please"), format])).chat_id;
  let fence = await worker.acquire(receiptChat);
  fence = await worker.candidate(receiptChat, fence, '{"total": 10.50}');
  await worker.finish(receiptChat, fence);

  // A turn in flight across the upgrade (leased, one step committed), with a message queued behind it.
  const inFlightChat = (await asUser<{ chat_id: string }>("select * from chat_public.create_chat(content => $1)", [content("hello")])).chat_id;
  await worker.acquire(inFlightChat);
  await asUser("select * from chat_public.send_chat_message($1, $2, null, 'queue', null)", [inFlightChat, content("and then")]);

  // A batch of two items with one slot: the first succeeded, the second runs across the upgrade.
  const items = JSON.stringify([1, 2].map((line) => ({ line, content: [{ type: "text", text: `item ${line}` }] })));
  const batchId = (await asUser<{ id: string }>("select * from chat_public.create_batch(response_format => $1, items => $2, concurrency => 1)",
    [format, items])).id;
  await sql.query("select chat_private.finish_batch_validation($1, null)", [batchId]);
  const itemChat = async (line: number) => (await sql.query<{ chat_id: string }>(
    "select chat_id from chat_public.batch_items where batch_id = $1 and line = $2", [batchId, line])).rows[0]!.chat_id;
  const first = await itemChat(1);
  fence = await worker.acquire(first);
  fence = await worker.candidate(first, fence, '{"n": 1}');
  await worker.finish(first, fence);
  return { userId, receiptChat, inFlightChat, batchId, runningItemChat: await itemChat(2) };
}
