// The operator's toolkit (sql/090_operations.sql): views that explain the state, repair transitions for
// chat_operator and nothing broader.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, chatRow, createChat, finishError, receipts, sendMessage, settleServerEpoch, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("ops"));
  await settleServerEpoch(db);
});
test.after(async () => {
  await db.drop();
});

const asOperator = <T>(sql: string, params: unknown[] = []) =>
  db.as("chat_operator", null, (client) => client.query<T & object>(sql, params), true);

async function jobExists(chatId: string): Promise<boolean> {
  const { rows } = await db.pool.query("select 1 from graphile_worker.jobs where key = $1", [`chat:${chatId}`]);
  return rows.length > 0;
}

test("a chat with an expired lease and no worker shows in the stuck view; releasing the lease re-enqueues it", async () => {
  const chat = await createChat(db, user, "stuck");
  await acquire(db, chat.chat_id);
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '1 minute' where chat_id = $1", [chat.chat_id]);
  await db.pool.query("select graphile_worker.remove_job($1)", [`chat:${chat.chat_id}`]);
  const stuck = await asOperator<{ chat_id: string; recoveries: number }>("select * from chat_private.stuck_chats where chat_id = $1", [chat.chat_id]);
  assert.is(stuck.rows.length, 1);
  const released = await asOperator<{ released: boolean }>("select chat_private.operator_release_lease($1) as released", [chat.chat_id]);
  assert.is(released.rows[0]!.released, true);
  assert.ok(await jobExists(chat.chat_id), "the chat is back in the job queue");
  const lease = await db.pool.query("select 1 from chat_private.chat_leases where chat_id = $1", [chat.chat_id]);
  assert.is(lease.rows.length, 0);
});

test("operator_release_lease fences the old runner out (CHFNC)", async () => {
  const chat = await createChat(db, user, "fenced");
  const fence = await acquire(db, chat.chat_id);
  await asOperator("select chat_private.operator_release_lease($1)", [chat.chat_id]);
  const state = await sqlState(db.pool.query("select chat_private.commit_step($1, $2, $3, $4, '[]')",
    [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt]));
  assert.is(state, "CHFNC");
});

test("cancelling a stuck request commits exactly one operator_canceled receipt with the reason", async () => {
  const chat = await createChat(db, user, "structured", structured());
  await acquire(db, chat.chat_id);
  const requestId = chat.structured_output_request_id!;
  await asOperator("select chat_private.operator_cancel_request($1, 'provider outage, resubmit later')", [requestId]);
  const written = await receipts(db, chat.chat_id);
  assert.equal(written.map((r) => [r.request_id, r.status, r.code]), [[requestId, "canceled", "operator_canceled"]]);
  const { rows } = await db.pool.query<{ message: string }>(
    "select structured_output -> 'error' ->> 'message' as message from chat_public.chat_messages where id = $1", [written[0]!.id]);
  assert.is(rows[0]!.message, "provider outage, resubmit later");
  assert.is((await chatRow(db, chat.chat_id)).status, "interrupting", "the active turn is told to stop");
  assert.is(await sqlState(asOperator("select chat_private.operator_cancel_request($1, 'again')", [requestId])), "SODON");
  assert.is((await receipts(db, chat.chat_id)).length, 1, "still exactly one receipt");
});

test("cancelling a queued request removes it from the queue", async () => {
  const chat = await createChat(db, user, "busy");
  const queued = await sendMessage(db, user, chat.chat_id, "later", structured());
  await asOperator("select chat_private.operator_cancel_request($1, 'not needed')", [queued.structured_output_request_id]);
  const { rows } = await db.pool.query("select 1 from chat_public.chat_queued_messages where id = $1", [queued.queued_message_id]);
  assert.is(rows.length, 0);
  assert.is((await chatRow(db, chat.chat_id)).status, "running", "the unrelated running turn is untouched");
});

test("operator_cancel_request needs a reason (CIINV) and an existing request (SONTF)", async () => {
  const chat = await createChat(db, user, "reason", structured());
  assert.is(await sqlState(asOperator("select chat_private.operator_cancel_request($1, '  ')", [chat.structured_output_request_id])), "CIINV");
  assert.is(await sqlState(asOperator("select chat_private.operator_cancel_request(gen_random_uuid(), 'x')")), "SONTF");
});

test("retrying an errored chat runs the queue head first, else the last input again", async () => {
  const chat = await createChat(db, user, "will fail");
  const queued = await sendMessage(db, user, chat.chat_id, "queued before the failure");
  await finishError(db, await acquire(db, chat.chat_id));
  assert.is((await chatRow(db, chat.chat_id)).status, "error");
  await asOperator("select chat_private.operator_retry_chat($1)", [chat.chat_id]);
  const row = await chatRow(db, chat.chat_id);
  assert.is(row.status, "running");
  assert.is(row.last_error, null);
  const { rows } = await db.pool.query<{ n: string }>("select count(*) as n from chat_public.chat_queued_messages where id = $1", [queued.queued_message_id]);
  assert.is(rows[0]!.n, "0", "the queue head was promoted");

  const lone = await createChat(db, user, "fails alone");
  await finishError(db, await acquire(db, lone.chat_id));
  await asOperator("select chat_private.operator_retry_chat($1)", [lone.chat_id]);
  const turn = await db.pool.query<{ input_message_id: string }>(
    "select input_message_id from chat_private.turn_progress where chat_id = $1 and finished_at is null", [lone.chat_id]);
  assert.is(turn.rows[0]!.input_message_id, lone.message_id, "the last input runs again as a new turn");
});

test("recent_failures and turns_at_recovery_bound explain failures without provider bodies", async () => {
  const chat = await createChat(db, user, "crashes", structured());
  await acquire(db, chat.chat_id);
  await db.pool.query("update chat_private.settings set value = '0' where name = 'max_recoveries_per_turn'");
  try {
    await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '1 second' where chat_id = $1", [chat.chat_id]);
    await db.pool.query("select chat_private.sweep_expired_leases()");
    const failures = await asOperator<{ kind: string; code: string; message: string }>(
      "select kind, code, message from chat_private.recent_failures where chat_id = $1 order by kind", [chat.chat_id]);
    assert.equal(failures.rows.map((r) => [r.kind, r.code]), [["chat", "recovery_limit"], ["request", "generation_failed"]]);
    const bound = await asOperator("select * from chat_private.turns_at_recovery_bound where chat_id = $1", [chat.chat_id]);
    assert.is(bound.rows.length, 1);
  } finally {
    await db.pool.query("update chat_private.settings set value = '3' where name = 'max_recoveries_per_turn'");
  }
});

test("queue_depth, lease_holders and request_outcomes_hourly are readable by the operator", async () => {
  const chat = await createChat(db, user, "depth");
  await sendMessage(db, user, chat.chat_id, "one", structured());
  await sendMessage(db, user, chat.chat_id, "two");
  await acquire(db, chat.chat_id);
  const depth = await asOperator<{ queued: string; queued_structured: string }>(
    "select queued, queued_structured from chat_private.queue_depth where chat_id = $1", [chat.chat_id]);
  assert.equal([depth.rows[0]!.queued, depth.rows[0]!.queued_structured], ["2", "1"]);
  const holders = await asOperator<{ live: boolean }>("select live from chat_private.lease_holders where chat_id = $1", [chat.chat_id]);
  assert.is(holders.rows[0]!.live, true);
  const outcomes = await asOperator<{ requests: string }>("select sum(requests) as requests from chat_private.request_outcomes_hourly");
  assert.ok(Number(outcomes.rows[0]!.requests) > 0);
});

test("job_queue counts Graphile Worker's jobs by task for the operator, who cannot read graphile_worker itself", async () => {
  const chat = await createChat(db, user, "queued job");
  assert.ok(await jobExists(chat.chat_id), "fixture: the chat has a job");
  const { rows: expected } = await db.pool.query<{ n: string }>(
    "select count(*) as n from graphile_worker.jobs where task_identifier = 'chat_run' and locked_at is null and run_at <= now()");
  const { rows } = await asOperator<{ waiting: string; running: string }>(
    "select waiting, running from chat_private.job_queue where task_identifier = 'chat_run'");
  assert.equal(rows, [{ waiting: expected[0]!.n, running: "0" }]);
  assert.is(await sqlState(asOperator("select count(*) from graphile_worker.jobs")), "42501", "the queue itself stays closed");
});

test("repairs and views are the operator's only: clients get 42501", async () => {
  const chat = await createChat(db, user, "not yours to repair");
  for (const sql of [
    "select chat_private.operator_release_lease($1)",
    "select chat_private.operator_retry_chat($1)",
    "select * from chat_private.stuck_chats where chat_id = $1",
    "select * from chat_private.job_queue where $1::uuid is not null",
  ]) {
    assert.is(await sqlState(db.as("chat_user", user, (c) => c.query(sql, [chat.chat_id]))), "42501", sql);
  }
  assert.is(await sqlState(asOperator("select * from chat_private.model_config_secrets")), "42501", "still no secrets");
  assert.is(await sqlState(asOperator("update chat_public.chats set title = 'x'")), "42501", "still no direct writes");
});

test.run();
