// Retention (sql/160 run_retention, worker/retention.ts): off by default; each rule deletes what is due in steps
// of retention_batch_size; an open reader of the same tables is never blocked and a chat a client holds is skipped,
// not waited for; `chatd ops status` shows what is due.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  acquire, archiveChat, Connections, count, createChat, createUser, finishTurn, setStructuredExperiment, structured, text,
} from "../support/chats.ts";
import { runChatd } from "../support/cli.ts";
import { makeWorkspaces, setSetting, startTestWorker, waitFor } from "../support/worker.ts";
import { runRetention, type RetentionReport } from "../../worker/retention.ts";
import { leftovers } from "./support.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  user = await createUser(db, "keeper");
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});
test.after.each(async () => {
  for (const name of ["retention_archived_chat_days", "retention_idle_chat_days", "retention_finished_batch_days"]) {
    await setSetting(db, name, 0);
  }
  await setSetting(db, "retention_batch_size", 50);
  // Whatever a test left due is cleared, so that each test counts only its own rows.
  await db.pool.query("delete from chat_public.chats");
  await db.pool.query("delete from chat_public.batches");
});

/** A chat whose turn finished (waiting), optionally archived, last changed `daysAgo` days ago. */
async function oldChat(daysAgo: number, archived: boolean): Promise<string> {
  const chat = await createChat(db, user, "old news");
  await finishTurn(db, await acquire(db, chat.chat_id));
  if (archived) await archiveChat(db, user, chat.chat_id);
  await backdate("chat_public.chats", "updated_at", chat.chat_id, daysAgo);
  return chat.chat_id;
}

/** Sets a timestamp in the past; the chat row's touch trigger would reset updated_at, so triggers are off here. */
async function backdate(table: string, column: string, id: string, daysAgo: number): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query("begin");
    await client.query("set local session_replication_role = replica");
    await client.query(`update ${table} set ${column} = now() - make_interval(days => $2) where id = $1`, [id, daysAgo]);
    await client.query("commit");
  } finally {
    client.release();
  }
}

// The transient rules (test/lifecycle/transient-retention.test.ts) find nothing due here: this file's rows are new.
const NONE = { idempotency_keys: 0, webhook_deliveries: 0, failed_jobs: 0 };
const step = async () => (await db.pool.query<{ r: RetentionReport }>("select chat_private.run_retention() as r")).rows[0]!.r;
const exists = async (id: string) => (await count(db, "select 1 from chat_public.chats where id = $1", [id])) === 1;

test("off by default: nothing is due and nothing is deleted, however old", async () => {
  const { rows } = await db.pool.query("select name, value from chat_private.settings where name like 'retention_%_days' order by 1");
  assert.equal(rows.map((r) => [r.name, r.value]), [
    ["retention_archived_chat_days", 0], ["retention_finished_batch_days", 0], ["retention_idle_chat_days", 0]]);
  const archived = await oldChat(400, true);
  const idle = await oldChat(400, false);
  assert.equal(await step(), { chats: 0, batches: 0, deleted_request_ids: 0, ...NONE });
  assert.ok(await exists(archived) && await exists(idle));
  const due = await db.pool.query("select rule, days, due::int from chat_private.retention_due() order by rule");
  assert.equal(due.rows.map((r) => [r.rule, r.days, r.due]), [
    ["archived_chats", 0, 0], ["deleted_requests", 30, 0], ["failed_jobs", 7, 0], ["finished_batches", 0, 0], ["idempotency_keys", 7, 0],
    ["idle_chats", 0, 0], ["webhook_deliveries", 30, 0]]);
});

test("archived chats: only those older than the setting, retention_batch_size per step (N, then the rest)", async () => {
  await setSetting(db, "retention_archived_chat_days", 30);
  await setSetting(db, "retention_batch_size", 3);
  const due = [await oldChat(31, true), await oldChat(31, true), await oldChat(31, true), await oldChat(40, true)];
  const recent = await oldChat(29, true);
  const idle = await oldChat(400, false);
  const status = await runChatd(["ops", "status"], db.url);
  assert.is(status.code, 0, status.out);
  assert.match(status.out, "archived_chats: after 30 days, 4 due now");
  assert.match(status.out, "idle_chats: off");
  assert.is((await step()).chats, 3);
  assert.is((await step()).chats, 1);
  assert.is((await step()).chats, 0);
  assert.equal(await leftovers(db, due), {});
  assert.ok(await exists(recent), "a chat inside the window stays");
  assert.ok(await exists(idle), "the idle rule is off");
});

test("idle chats: waiting or in error and unchanged for the setting; a running chat or a batch's chat is not idle", async () => {
  await setSetting(db, "retention_idle_chat_days", 7);
  const idle = await oldChat(8, false);
  const running = await createChat(db, user, "still going");
  await backdate("chat_public.chats", "updated_at", running.chat_id, 8);
  const report = await runRetention(db.pool);
  assert.equal(report, { chats: 1, batches: 0, deleted_request_ids: 0, ...NONE });
  assert.not.ok(await exists(idle));
  assert.ok(await exists(running.chat_id));
});

test("finished batches: their chats go in steps, then the batch and its items", async () => {
  await setSetting(db, "retention_finished_batch_days", 10);
  await setSetting(db, "retention_batch_size", 2);
  const { rows: [batch] } = await db.as("chat_user", user, (c) => c.query<{ id: string }>(
    "select id from chat_public.create_batch($1, $2)", [structured(), JSON.stringify([1, 2, 3].map((line) => ({ line, content: JSON.parse(text(`item ${line}`)) })))]), true);
  const chats: string[] = [];
  for (const line of [1, 2, 3]) {
    const chat = await oldChat(11, false);
    chats.push(chat);
    await db.pool.query(`update chat_public.batch_items set status = 'succeeded', chat_id = $3, started_at = now(), finished_at = now()
      where batch_id = $1 and line = $2`, [batch!.id, line, chat]);
  }
  await db.pool.query("update chat_public.batches set status = 'completed', started_at = now(), finished_at = now() - interval '11 days' where id = $1", [batch!.id]);
  assert.equal(await step(), { chats: 2, batches: 0, deleted_request_ids: 0, ...NONE });
  assert.is(await count(db, "select 1 from chat_public.batches where id = $1", [batch!.id]), 1, "the batch waits for its last chats");
  assert.equal(await step(), { chats: 1, batches: 1, deleted_request_ids: 0, ...NONE });
  assert.is(await count(db, "select 1 from chat_public.batch_items where batch_id = $1", [batch!.id]), 0);
  assert.equal(await leftovers(db, chats), {});
});

test("deleted-request ids expire after deleted_request_days", async () => {
  const chat = await createChat(db, user, "q", structured());
  await db.as("chat_user", user, (c) => c.query("select chat_public.delete_chat($1)", [chat.chat_id]), true);
  const id = chat.structured_output_request_id!;
  assert.is(await count(db, "select 1 from chat_private.deleted_requests where id = $1", [id]), 1);
  assert.is((await step()).deleted_request_ids, 0);
  await db.pool.query("update chat_private.deleted_requests set deleted_at = now() - interval '31 days' where id = $1", [id]);
  assert.is((await step()).deleted_request_ids, 1);
});

test("an open reader of the same tables is not blocked, and a chat a client holds is skipped, not waited for", async () => {
  await setSetting(db, "retention_archived_chat_days", 1);
  const free = [await oldChat(2, true), await oldChat(2, true)];
  const held = await oldChat(2, true);
  // The reader: a repeatable-read transaction that has read every table a deletion touches, and stays open.
  const { client: reader, pid: readerPid } = await connections.open(db);
  await reader.query("begin isolation level repeatable read");
  const read = async () => (await reader.query<{ n: number }>(
    `select (select count(*) from chat_public.chats) + (select count(*) from chat_public.chat_messages)
       + (select count(*) from chat_private.turn_progress) + (select count(*) from chat_public.structured_output_requests) as n`)).rows[0]!.n;
  const before = await read();
  // A client in the middle of a transition on one due chat: it holds the chat row.
  const { client: holder, pid: holderPid } = await connections.open(db);
  await holder.query("begin");
  await holder.query("select 1 from chat_public.chats where id = $1 for no key update", [held]);

  const observer = new pg.Client({ connectionString: db.url });
  await observer.connect();
  connections.track(observer);
  const retention = await connections.open(db);
  await retention.client.query("set lock_timeout = '10s'");
  const report = (await retention.client.query<{ r: { chats: number } }>("select chat_private.run_retention() as r")).rows[0]!.r;
  assert.is(report.chats, 2, "the free chats went; the held one was skipped");
  const { rows: waits } = await observer.query(
    "select pid from pg_locks where not granted and pid = any($1)", [[readerPid, holderPid, retention.pid]]);
  assert.equal(waits, [], "nobody waits on a lock");
  assert.is(await read(), before, "the reader still reads its snapshot, unblocked");
  await reader.query("commit");
  assert.equal(await leftovers(db, free), {});
  assert.ok(await exists(held));
  await holder.query("commit");
  assert.is((await step()).chats, 1, "the next run takes the chat once the client let go");
  assert.not.ok(await exists(held));
});

test("a worker schedules the data_retention job when it starts, and the job deletes what is due", async () => {
  await setSetting(db, "retention_archived_chat_days", 1);
  const due = await oldChat(2, true);
  const kept = await oldChat(0, true);
  // Their turns were driven in SQL, which leaves each chat's wake-up job queued: a worker would run it beside the
  // retention job and hold the chat row just then, and retention skips a held row until its next run (10 minutes).
  for (const chat of [due, kept]) await db.pool.query("select graphile_worker.remove_job('chat:' || $1)", [chat]);
  const worker = await startTestWorker(db, await makeWorkspaces());
  try {
    try {
      await waitFor("retention to delete the due chat", async () => !(await exists(due)));
    } catch (error) {
      // Say why: the job's row (never added, waiting, locked, or failed with its error) decides where to look.
      const { rows } = await db.pool.query(`select run_at, locked_at, attempts, max_attempts, last_error
        from graphile_worker.jobs where task_identifier = 'data_retention'`);
      throw new Error(`${(error as Error).message}; data_retention jobs: ${JSON.stringify(rows)}`, { cause: error });
    }
    assert.equal(await leftovers(db, [due]), {});
    assert.ok(await exists(kept));
    await waitFor("the job to end", async () =>
      (await count(db, "select 1 from graphile_worker.jobs where task_identifier = 'data_retention' and locked_at is not null")) === 0);
  } finally {
    await worker.stop();
  }
});

test.run();
