// Fresh == upgraded: the previous release's database, with chats, receipts and a batch written by that release
// (and work in flight), migrated to this build, has exactly the schema of a fresh install, and its rows stay
// readable and keep working with this build's transitions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { migrate } from "../../src/db/migrate.ts";
import { diffDumps, dumpSchema } from "../../src/db/schema-dump.ts";
import { acquire, commitCandidate, expireLease, finishTurn } from "../support/chats.ts";
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from "../support/db.ts";
import { chatdOverloads } from "./overloads.ts";
import { installRelease, RELEASE, writeWithRelease } from "./release.ts";

const databases: TestDatabase[] = [];
test.after(async () => {
  for (const db of databases) await db.drop();
});

test(`the database of release ${RELEASE}, with its data, migrated to this build: its schema is a fresh install's`, async () => {
  const upgraded = await createEmptyDatabase();
  databases.push(upgraded);
  await installRelease(upgraded.url);
  await writeWithRelease(upgraded);
  const result = await migrate(upgraded.url);
  assert.ok(result.migrationsApplied.includes("0008_stateful_objects_from_sql"), "the new migrations ran");
  const fresh = await createTestDatabase();
  databases.push(fresh);
  // The whole database: Graphile Worker's schema and chatd_meta too, with every grant (pg_dump's ACL entries).
  const diff = diffDumps(await dumpSchema(upgraded.url, { wholeDatabase: true }), await dumpSchema(fresh.url, { wholeDatabase: true }));
  console.log(`upgraded vs fresh whole-database dump: ${diff.length} differing lines`);
  assert.equal(diff, []);
  const publicExecutes = async (db: TestDatabase) => (await db.pool.query<{ f: string }>(`select p.oid::regprocedure::text as f
    from pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
    where p.pronamespace = 'graphile_worker'::regnamespace and a.grantee = 0 order by 1`)).rows.map((row) => row.f);
  assert.equal(await publicExecutes(upgraded), [], "PUBLIC executes no Graphile Worker function after an upgrade");
  assert.equal(await publicExecutes(fresh), [], "nor on a fresh install");
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
