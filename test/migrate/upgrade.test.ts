// Fresh == upgraded: the previous release's database, with chats, receipts and a batch written by that release
// (and work in flight), migrated to this build, has exactly the schema of a fresh install, and its rows stay
// readable and keep working with this build's transitions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { migrate } from "../../src/db/migrate.ts";
import { diffDumps, dumpSchema } from "../../src/db/schema-dump.ts";
import { acquire, commitCandidate, expireLease, finishTurn } from "../support/chats.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/db.ts";
import { chatdOverloads } from "./overloads.ts";
import { installRelease, RELEASE } from "./release.ts";

const databases: TestDatabase[] = [];
test.after(async () => {
  for (const db of databases) await db.drop();
});

interface Written {
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
async function writeWithRelease(db: TestDatabase): Promise<Written> {
  const sql = db.pool;
  const userId = (await sql.query<{ id: string }>("insert into chat_public.users (name) values ('old-release') returning id")).rows[0]!.id;
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

test(`the database of release ${RELEASE}, with its data, migrated to this build: its schema is a fresh install's`, async () => {
  const upgraded = await createEmptyDatabase();
  databases.push(upgraded);
  await installRelease(upgraded.url);
  await writeWithRelease(upgraded);
  const result = await migrate(upgraded.url);
  assert.ok(result.migrationsApplied.includes("0008_stateful_objects_from_sql"), "the new migrations ran");
  const fresh = await createTestDatabase();
  databases.push(fresh);
  const diff = diffDumps(await dumpSchema(upgraded.url), await dumpSchema(fresh.url));
  console.log(`upgraded vs fresh schema dump: ${diff.length} differing lines`);
  assert.equal(diff, []);
  assert.equal(await chatdOverloads(upgraded.pool), []);
  for (const table of ["chat_private.transition_rules", "chat_private.settings", "chat_private.experiments"]) {
    const rows = async (db: TestDatabase) => (await db.pool.query(
      `select to_jsonb(t) - 'updated_at' - 'enabled' as row from ${table} t order by 1::text`)).rows.map((r) => JSON.stringify(r.row)).sort();
    assert.equal(await rows(upgraded), await rows(fresh), `${table}: the same seed rows`);
  }
});

test(`rows written by release ${RELEASE} stay readable and consistent, and its work in flight completes with this build`, async () => {
  const db = await createEmptyDatabase();
  databases.push(db);
  await installRelease(db.url);
  const old = await writeWithRelease(db);
  await migrate(db.url);

  // The client's view (RLS) of what the old release wrote.
  const seen = await db.as("chat_user", old.userId, async (client) => ({
    chats: (await client.query("select id from chat_public.chats")).rowCount,
    receipt: (await client.query<{ status: string; value_json: string }>(
      `select (chat_public.chat_messages_structured_output(m)).* from chat_public.chat_messages m
       where m.chat_id = $1 and m.kind = 'receipt'`, [old.receiptChat])).rows,
    request: (await client.query<{ status: string }>(
      "select status::text from chat_public.structured_output_requests where chat_id = $1", [old.receiptChat])).rows,
  }));
  assert.is(seen.chats, 4, "two chats and two batch item chats");
  assert.equal(seen.receipt.map((r) => [r.status, r.value_json]), [["succeeded", '{"total": 10.50}']]);
  assert.equal(seen.request.map((r) => r.status), ["succeeded"]);
  const revisions = await db.pool.query(
    "select 1 from chat_public.chat_messages m join chat_public.chats c on c.id = m.chat_id where m.revision is null or m.revision > c.snapshot_version");
  assert.is(revisions.rowCount, 0, "every message has a revision within its chat's snapshot");

  // The turn in flight: this build's worker transitions finish it and the queued message starts the next turn.
  // The old worker is gone with the old release; its lease runs out and a new worker takes the chat over.
  await expireLease(db, old.inFlightChat);
  let fence = await acquire(db, old.inFlightChat, "new-worker");
  assert.is(await finishTurn(db, fence, null), "running", "the queued message starts the next turn");
  const queued = await db.pool.query("select 1 from chat_public.chat_queued_messages where chat_id = $1", [old.inFlightChat]);
  assert.is(queued.rowCount, 0);

  // The batch: its running item finishes with this build and the batch completes.
  fence = await acquire(db, old.runningItemChat, "new-worker");
  fence = await commitCandidate(db, fence, '{"n": 2}');
  await finishTurn(db, fence, null);
  const batch = await db.pool.query<{ status: string; counts: { succeeded: number } }>(
    "select b.status::text, to_jsonb(chat_public.batches_item_counts(b)) as counts from chat_public.batches b where id = $1", [old.batchId]);
  assert.equal([batch.rows[0]!.status, batch.rows[0]!.counts.succeeded], ["completed", 2]);
});

test.run();
