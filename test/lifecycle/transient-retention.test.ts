// Retention of transient rows (sql/160 transient_candidates, run by run_retention): idempotency keys clients sent,
// finished webhook deliveries and permanently failed jobs go after their setting's days (on by default: 7, 30, 7);
// keys chatd minted for batch items and subagents stay while their chat does; 0 turns a rule off.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { count, createChat, createUser } from "../support/chats.ts";
import { setSetting } from "../support/worker.ts";
import type { RetentionReport } from "../../worker/retention.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "transient");
});
test.after(async () => {
  await db.drop();
});

const step = async () => (await db.pool.query<{ r: RetentionReport }>("select chat_private.run_retention() as r")).rows[0]!.r;
const due = async (rule: string) => (await db.pool.query<{ due: number }>(
  "select due::int from chat_private.retention_due() where rule = $1", [rule])).rows[0]!.due;
/** `interval` ago, as a timestamp for the row's age column. */
const ago = (interval: string) => `now() - interval '${interval}'`;

test("the transient rules are on by default", async () => {
  const { rows } = await db.pool.query("select name, value from chat_private.settings where name in ('idempotency_key_days', 'webhook_delivery_days', 'failed_job_days') order by 1");
  assert.equal(rows.map((r) => [r.name, r.value]), [["failed_job_days", 7], ["idempotency_key_days", 7], ["webhook_delivery_days", 30]]);
});

test("idempotency keys: a client's key goes after idempotency_key_days (not a minute before), minted ones stay", async () => {
  const expired = await createChat(db, user, "old", null, { idempotencyKey: "client-old" });
  const fresh = await createChat(db, user, "recent", null, { idempotencyKey: "client-recent" });
  await db.pool.query(`update chat_private.idempotency_keys set created_at = ${ago("7 days 1 minute")} where key = 'client-old'`);
  await db.pool.query(`update chat_private.idempotency_keys set created_at = ${ago("6 days 23 hours 59 minutes")} where key = 'client-recent'`);
  // Keys chatd mints for a batch item and a subagent, however old: their chats still exist.
  await db.pool.query(`insert into chat_private.idempotency_keys (owner_id, key, operation, result, created_at) values
    ($1, 'batch:b:1', 'create_chat', '{}', ${ago("400 days")}), ($1, 'agent:p:call-1', 'create_chat', '{}', ${ago("400 days")})`, [user]);
  assert.is(await due("idempotency_keys"), 1);
  assert.is((await step()).idempotency_keys, 1);
  assert.equal((await db.pool.query("select key from chat_private.idempotency_keys where owner_id = $1 order by key", [user])).rows.map((r) => r.key),
    ["agent:p:call-1", "batch:b:1", "client-recent"]);
  // What a client sees: a retry with the expired key is a new request; with the kept key, the first result.
  assert.is.not((await createChat(db, user, "old", null, { idempotencyKey: "client-old" })).chat_id, expired.chat_id);
  assert.is((await createChat(db, user, "recent", null, { idempotencyKey: "client-recent" })).chat_id, fresh.chat_id);
  await db.pool.query("delete from chat_private.idempotency_keys where key like 'batch:%' or key like 'agent:%'");
});

test("idempotency keys: retention_batch_size per step (N, then the rest); 0 turns the rule off", async () => {
  await setSetting(db, "retention_batch_size", 2);
  await db.pool.query(`insert into chat_private.idempotency_keys (owner_id, key, operation, result, created_at)
    select $1, 'bulk-' || i, 'create_chat', '{}', ${ago("8 days")} from generate_series(1, 3) i`, [user]);
  await setSetting(db, "idempotency_key_days", 0);
  assert.is(await due("idempotency_keys"), 0);
  assert.is((await step()).idempotency_keys, 0);
  await setSetting(db, "idempotency_key_days", 7);
  assert.is((await step()).idempotency_keys, 2);
  assert.is((await step()).idempotency_keys, 1);
  assert.is((await step()).idempotency_keys, 0);
  await setSetting(db, "retention_batch_size", 50);
});

test("webhook deliveries: delivered and failed ones go with their attempts after webhook_delivery_days; pending ones stay", async () => {
  const { rows: [endpoint] } = await db.pool.query<{ id: string }>("select chat_private.webhook_add($1, $2, null, $3) as id",
    [user, "https://receiver.example/hook", `whsec_${Buffer.alloc(32, 3).toString("base64")}`]);
  for (const subject of ["resp_delivered", "resp_failed", "resp_pending", "resp_recent"]) {
    await db.pool.query("select chat_private.webhook_enqueue($1, 'response.completed', $2, now())", [user, subject]);
  }
  const set = (subject: string, status: string, age: string) => db.pool.query(
    `update chat_private.webhook_deliveries set status = $2, created_at = ${ago(age)},
       next_attempt_at = case when $2 = 'pending' then now() end where subject_id = $1`, [subject, status]);
  await set("resp_delivered", "delivered", "30 days 1 minute");
  await set("resp_failed", "failed", "31 days");
  await set("resp_pending", "pending", "31 days");
  await set("resp_recent", "delivered", "29 days 23 hours 59 minutes");
  await db.pool.query(`insert into chat_private.webhook_attempts (delivery_id, attempt, status_code)
    select id, 1, 200 from chat_private.webhook_deliveries where subject_id = 'resp_delivered'`);
  assert.is(await due("webhook_deliveries"), 2);
  assert.is((await step()).webhook_deliveries, 2);
  assert.equal((await db.pool.query("select subject_id from chat_private.webhook_deliveries order by 1")).rows.map((r) => r.subject_id),
    ["resp_pending", "resp_recent"]);
  assert.is(await count(db, "select 1 from chat_private.webhook_attempts"), 0, "the attempts went with their delivery");
  assert.is(await count(db, "select 1 from chat_private.webhook_endpoints where id = $1", [endpoint!.id]), 1);
});

test("failed jobs: a permanently failed job goes after failed_job_days; a job still to run stays", async () => {
  await db.pool.query("delete from graphile_worker._private_jobs");
  for (const key of ["failed-old", "failed-recent", "waiting-old"]) {
    await db.pool.query("select graphile_worker.add_job('chat_run', '{}'::json, job_key := $1, max_attempts := 1)", [key]);
  }
  const age = (key: string, attempts: number, interval: string) => db.pool.query(
    `update graphile_worker._private_jobs set attempts = $2, updated_at = ${ago(interval)} where key = $1`, [key, attempts]);
  await age("failed-old", 1, "7 days 1 minute");
  await age("failed-recent", 1, "6 days 23 hours 59 minutes");
  await age("waiting-old", 0, "30 days");
  assert.is(await due("failed_jobs"), 1);
  assert.is((await step()).failed_jobs, 1);
  assert.equal((await db.pool.query("select key from graphile_worker._private_jobs order by 1")).rows.map((r) => r.key),
    ["failed-recent", "waiting-old"]);
});

test.run();
