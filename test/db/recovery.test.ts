// Recovery and client tools: the lease sweep re-enqueues crashed turns and fails them past the bound;
// requires_action deadlines, interrupts and tool results. Time passes by back-dating, never by sleeping.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, chatRow, chatStatus, commitStep, count, createChat, dynamicTool,
  enterRequiresAction, expireLease, type Fence, interrupt, receipts, requestStatus, requiresActionChat, sendMessage,
  settleServerEpoch,
  structured, submitToolResults,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("recovery"));
  await settleServerEpoch(db);
});
test.after(async () => {
  await db.drop();
});

const sweep = async () => (await db.pool.query<{ n: number }>("select chat_private.sweep_expired_leases() as n")).rows[0]!.n;

async function recoveries(chatId: string): Promise<number | undefined> {
  const { rows } = await db.pool.query<{ recoveries: number }>(
    "select recoveries from chat_private.turn_progress where chat_id = $1 and finished_at is null", [chatId]);
  return rows[0]?.recoveries;
}

/** Unlocked chat_run jobs for the chat (graphile_worker 0.18: the public view graphile_worker.jobs has `key`). */
const availableRunJobs = (chatId: string) => count(db,
  "select 1 from graphile_worker.jobs where key = $1 and task_identifier = 'chat_run' and locked_at is null", [`chat:${chatId}`]);

/** A worker took the chat's job and crashed: the job stays locked (for 4 hours in graphile_worker) and the lease expires. */
async function crash(chatId: string): Promise<void> {
  // Graphile Worker has no public function that locks a job, so the table.
  await db.pool.query("update graphile_worker._private_jobs set locked_at = now(), locked_by = 'crashed-worker' where key = $1",
    [`chat:${chatId}`]);
  await expireLease(db, chatId);
}

test("creating a chat enqueues its chat_run job in the same transaction", async () => {
  const chat = await createChat(db, user, "enqueue");
  assert.is(await availableRunJobs(chat.chat_id), 1);
});

test("the sweep re-enqueues a running chat whose lease expired and counts a recovery", async () => {
  const chat = await createChat(db, user, "crash once");
  const fence = await acquire(db, chat.chat_id);
  await crash(chat.chat_id);
  assert.is(await availableRunJobs(chat.chat_id), 0);
  assert.ok(await sweep() >= 1);
  assert.is(await availableRunJobs(chat.chat_id), 1);
  assert.is(await recoveries(chat.chat_id), 1);
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chat.chat_id]), 0);
  assert.is(await chatStatus(db, chat.chat_id), "running");
  assert.is(await sqlState(commitStep(db, fence, [assistantText("zombie")])), "CHFNC");
  const next = await acquire(db, chat.chat_id);
  await commitStep(db, next, [assistantText("recovered")]);
});

test("a dead worker's jobs: its chat_run jobs are removed, its other jobs unlocked to run again", async () => {
  const chat = await createChat(db, user, "dead worker");
  await acquire(db, chat.chat_id);
  await db.pool.query("select chat_private.report_worker_alive('dead-queue', 'dead-worker', 60)");
  await db.pool.query("update chat_private.worker_processes set expires_at = now() - interval '1 second' where queue_id = 'dead-queue'");
  await db.pool.query("select graphile_worker.add_job('recovery_test_other', '{}'::json, job_key := 'recovery-test-other')");
  // Graphile Worker has no public function that locks a job, so the table.
  await db.pool.query("update graphile_worker._private_jobs set locked_at = now(), locked_by = 'dead-queue' where key = any($1)",
    [[`chat:${chat.chat_id}`, "recovery-test-other"]]);
  const { rows: [run] } = await db.pool.query<{ id: string }>("select id from graphile_worker.jobs where key = $1", [`chat:${chat.chat_id}`]);
  await sweep();
  assert.is(await count(db, "select 1 from graphile_worker.jobs where locked_by = 'dead-queue'"), 0);
  assert.is(await count(db, "select 1 from graphile_worker.jobs where id = $1", [run!.id]), 0, "the fetched chat_run job is gone");
  assert.is(await count(db, "select 1 from graphile_worker.jobs where key = 'recovery-test-other' and locked_at is null"), 1,
    "another task's job is unlocked now, not after Graphile Worker's four-hour lock timeout");
  await db.pool.query("select graphile_worker.remove_job('recovery-test-other')");
});

test("the sweep leaves a chat with a live lease alone", async () => {
  const chat = await createChat(db, user, "healthy");
  const fence = await acquire(db, chat.chat_id);
  await db.pool.query("select graphile_worker.remove_job($1)", [`chat:${chat.chat_id}`]);
  await sweep();
  assert.is(await availableRunJobs(chat.chat_id), 0);
  assert.is(await recoveries(chat.chat_id), 0);
  await commitStep(db, fence, [assistantText("undisturbed")]);
});

test("a runnable chat without any lease (lost job) is re-enqueued without counting a recovery", async () => {
  const chat = await createChat(db, user, "lost job");
  await db.pool.query("select graphile_worker.remove_job($1)", [`chat:${chat.chat_id}`]);
  await sweep();
  assert.is(await availableRunJobs(chat.chat_id), 1);
  assert.is(await recoveries(chat.chat_id), 0);
});

test("past max_recoveries_per_turn the turn fails with generation_failed and the chat enters error; the queue stays usable", async () => {
  const chat = await createChat(db, user, "crash forever", structured());
  const queued = await sendMessage(db, user, chat.chat_id, "next in line");
  const max = Number((await db.pool.query("select value #>> '{}' as v from chat_private.settings where name = 'max_recoveries_per_turn'")).rows[0]!.v);
  assert.is(max, 3);
  for (let i = 1; i <= max; i++) {
    await acquire(db, chat.chat_id);
    await crash(chat.chat_id);
    await sweep();
    assert.is(await recoveries(chat.chat_id), i);
    assert.is(await chatStatus(db, chat.chat_id), "running", `recovery ${i} is within the bound`);
  }
  await acquire(db, chat.chat_id);
  await crash(chat.chat_id);
  await sweep();
  assert.is(await chatStatus(db, chat.chat_id), "error");
  const row = await chatRow(db, chat.chat_id);
  assert.is((row.last_error as { kind: string }).kind, "recovery_limit");
  assert.equal((await receipts(db, chat.chat_id)).map((r) => [r.request_id, r.status, r.code]),
    [[chat.structured_output_request_id, "failed", "generation_failed"]]);
  assert.is(await recoveries(chat.chat_id), undefined, "the turn is closed");
  assert.is(await count(db, "select 1 from chat_public.chat_queued_messages where id = $1", [queued.queued_message_id]), 1);

  // A later send runs the oldest queued message first.
  const sent = await sendMessage(db, user, chat.chat_id, "after the failure");
  assert.is(sent.message_id, null);
  assert.is(await chatStatus(db, chat.chat_id), "running");
  const { rows } = await db.pool.query<{ text: string }>(
    `select m.content -> 0 ->> 'text' as text from chat_private.turn_progress t join chat_public.chat_messages m on m.id = t.input_message_id
     where t.chat_id = $1 and t.finished_at is null`, [chat.chat_id]);
  assert.equal(rows, [{ text: "next in line" }]);
  const fence = await acquire(db, chat.chat_id);
  await commitStep(db, fence, [assistantText("running again")]);
});

async function pendingCalls(chatId: string) {
  const row = await chatRow(db, chatId);
  return { status: row.status, calls: row.pending_tool_calls, deadline: row.requires_action_deadline_at };
}

async function toolResults(chatId: string): Promise<{ tool_call_id: string; is_error: boolean; result: unknown }[]> {
  const { rows } = await db.pool.query(
    `select p ->> 'tool_call_id' as tool_call_id, (p ->> 'is_error')::boolean as is_error, p -> 'result' as result
     from chat_public.chat_messages m, jsonb_array_elements(m.content) p
     where m.chat_id = $1 and m.role = 'tool' and p ->> 'type' = 'tool-result' order by m.id`, [chatId]);
  return rows;
}

test("entering requires_action releases the lease and schedules the deadline job", async () => {
  const chat = await requiresActionChat(db, user);
  const state = await pendingCalls(chat.chat_id);
  assert.is(state.status, "requires_action");
  assert.equal(state.calls, [{ tool_call_id: "call-1", tool_name: "lookup" }]);
  assert.ok(state.deadline);
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chat.chat_id]), 0);
  assert.is(await count(db, `select 1 from graphile_worker.jobs j join chat_public.chats c on c.id = $2
    where j.key = $1 and j.task_identifier = 'chat_requires_action_deadline' and j.run_at = c.requires_action_deadline_at`,
  [`chat-deadline:${chat.chat_id}`, chat.chat_id]), 1);
});

test("cancel_requires_action before the deadline does nothing", async () => {
  const chat = await requiresActionChat(db, user);
  const { rows } = await db.pool.query("select chat_private.cancel_requires_action($1) as done", [chat.chat_id]);
  assert.equal(rows, [{ done: false }]);
  assert.is((await pendingCalls(chat.chat_id)).status, "requires_action");
  assert.equal(await toolResults(chat.chat_id), []);
});

test("cancel_requires_action after a back-dated deadline answers the calls with synthetic errors and the turn continues", async () => {
  const chat = await requiresActionChat(db, user, structured());
  await db.pool.query("update chat_public.chats set requires_action_deadline_at = now() - interval '1 second' where id = $1", [chat.chat_id]);
  const { rows } = await db.pool.query("select chat_private.cancel_requires_action($1) as done", [chat.chat_id]);
  assert.equal(rows, [{ done: true }]);
  assert.equal(await pendingCalls(chat.chat_id), { status: "running", calls: [], deadline: null });
  const results = await toolResults(chat.chat_id);
  assert.is(results.length, 1);
  assert.is(results[0]!.tool_call_id, "call-1");
  assert.is(results[0]!.is_error, true);
  assert.ok(JSON.stringify(results[0]!.result).includes("deadline"));
  assert.is((await requestStatus(db, chat.structured_output_request_id!)).status, "pending");
  assert.is(await availableRunJobs(chat.chat_id), 1, "the turn is runnable again");
  await commitStep(db, await acquire(db, chat.chat_id), [assistantText("continuing without the tool")]);
});

test("interrupting a chat that waits on client tools cancels the calls; the turn and its request continue", async () => {
  const chat = await requiresActionChat(db, user, structured());
  await interrupt(db, user, chat.chat_id);
  assert.equal(await pendingCalls(chat.chat_id), { status: "running", calls: [], deadline: null });
  assert.equal((await toolResults(chat.chat_id)).map((r) => [r.tool_call_id, r.is_error]), [["call-1", true]]);
  assert.is((await requestStatus(db, chat.structured_output_request_id!)).status, "pending");
  assert.equal(await receipts(db, chat.chat_id), []);
});

test("send with busy_behavior interrupt while waiting on client tools cancels the calls and queues at the head", async () => {
  const chat = await requiresActionChat(db, user);
  await sendMessage(db, user, chat.chat_id, "older");
  const urgent = await sendMessage(db, user, chat.chat_id, "urgent", null, "interrupt");
  assert.ok(urgent.queued_message_id);
  assert.equal(await pendingCalls(chat.chat_id), { status: "running", calls: [], deadline: null });
  const { rows } = await db.pool.query("select content -> 0 ->> 'text' as text from chat_public.chat_queued_messages where chat_id = $1 order by position",
    [chat.chat_id]);
  assert.equal(rows.map((r) => r.text), ["urgent", "older"]);
});

/** A structured turn whose step called the finalizer (fin-1) beside two dynamic tool calls. */
async function mixedBatch(): Promise<{ chatId: string; fence: Fence }> {
  const chat = await createChat(db, user, "tools", structured(), { dynamicTools: [dynamicTool("lookup"), dynamicTool("fetch")] });
  let fence = await acquire(db, chat.chat_id);
  fence = await commitStep(db, fence, [{ role: "assistant", content: [
    { type: "tool-call", tool_call_id: "call-1", tool_name: "lookup", args: {} },
    { type: "tool-call", tool_call_id: "call-2", tool_name: "fetch", args: {} },
    { type: "tool-call", tool_call_id: "fin-1", tool_name: "coder_structured_output", args: { output: 1 } },
  ] }], { steps: 1, rejection: { value_rejected: false } });
  return { chatId: chat.chat_id, fence };
}

test("enter_requires_action refuses the finalizer and undeclared tools as pending calls (TLRES)", async () => {
  const { fence } = await mixedBatch();
  assert.is(await sqlState(enterRequiresAction(db, fence, [{ tool_call_id: "fin-1", tool_name: "coder_structured_output" }])), "TLRES");
  assert.is(await sqlState(enterRequiresAction(db, fence, [{ tool_call_id: "x-1", tool_name: "undeclared" }])), "TLRES");
  assert.is(await sqlState(enterRequiresAction(db, fence, [])), "TLRES");
});

test("submit_tool_results must cover exactly the pending calls and refuses the finalizer's id (TLRES)", async () => {
  const { chatId, fence } = await mixedBatch();
  await enterRequiresAction(db, fence, [{ tool_call_id: "call-1", tool_name: "lookup" }, { tool_call_id: "call-2", tool_name: "fetch" }]);
  const r = (id: string) => ({ tool_call_id: id, result: { id } });
  for (const results of [[], [r("call-1")], [r("call-1"), r("call-2"), r("call-3")], [r("call-1"), r("call-1")],
    [r("call-1"), r("call-2"), r("fin-1")], [r("call-1"), r("fin-1")], [r("fin-1")]]) {
    assert.is(await sqlState(submitToolResults(db, user, chatId, results)), "TLRES", JSON.stringify(results));
    assert.is((await pendingCalls(chatId)).status, "requires_action");
  }
  assert.equal(await toolResults(chatId), []);
  await submitToolResults(db, user, chatId, [r("call-2"), { ...r("call-1"), is_error: true }]);
  assert.equal(await pendingCalls(chatId), { status: "running", calls: [], deadline: null });
  assert.equal(await toolResults(chatId), [
    { tool_call_id: "call-1", is_error: true, result: { id: "call-1" } },
    { tool_call_id: "call-2", is_error: false, result: { id: "call-2" } },
  ]);
});

test("malformed tool results are refused (CIINV)", async () => {
  const chat = await requiresActionChat(db, user);
  for (const results of [[{ tool_call_id: "call-1" }], [{ tool_call_id: 1, result: 1 }], [{ tool_call_id: "call-1", result: 1, extra: 1 }],
    [{ tool_call_id: "call-1", result: 1, is_error: "yes" }]]) {
    assert.is(await sqlState(submitToolResults(db, user, chat.chat_id, results)), "CIINV", JSON.stringify(results));
  }
});

test.run();
