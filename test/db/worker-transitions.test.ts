// The worker transitions acquire_lease, commit_step and commit_step_and_finish_turn (finish_turn: finish-turn.test.ts),
// with what their cost-sensitive paths (one locking UPDATE per transition, set-based step inserts, the history
// fence moved in commit_step's bump) must keep: element order of a step's errors, ids and internals in input
// order, the checks after a lock wait, the versions each transition leaves, and the notification payloads.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, blockedOnLock as waitForLock, chatRow, commitCandidate, commitStep,
  Connections, count, createChat, currentFence, type Fence, finishTurn, sendMessage, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  ({ db, user } = await chatDatabase("worker-transitions"));
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});

const connection = () => connections.open(db);

const messageCount = (chatId: string) => count(db, "select 1 from chat_public.chat_messages where chat_id = $1", [chatId]);

test("a step's rows get ids in input order, internals on their own rows, the candidate its row, one revision", async () => {
  const chat = await createChat(db, user, "three rows", structured());
  const fence = await acquire(db, chat.chat_id);
  const rows = [
    { ...assistantText("first"), internals: { finish: { reason: "a" } } },
    { role: "tool", content: [{ type: "tool-result", tool_call_id: "c", tool_name: "t", result: 1 }] },
    { ...assistantText("third"), visibility: "model", kind: "control", internals: { finish: { reason: "c" } } },
  ];
  const next = await commitStep(db, fence, rows, { steps: 1, candidate: { value: 7, step: 1, message_index: 2 } });
  const { rows: stored } = await db.pool.query<{ id: string; role: string; kind: string; visibility: string; revision: string; finish: string | null }>(
    `select m.id, m.role, m.kind, m.visibility, m.revision, i.finish ->> 'reason' as finish
     from chat_public.chat_messages m left join chat_private.message_internals i on i.message_id = m.id
     where m.chat_id = $1 and m.id > $2 order by m.id`, [chat.chat_id, chat.message_id]);
  assert.equal(stored.map((r) => [r.role, r.kind, r.visibility, r.finish]),
    [["assistant", "message", "both", "a"], ["tool", "message", "both", null], ["assistant", "control", "model", "c"]]);
  const row = await chatRow(db, chat.chat_id);
  for (const r of stored) assert.is(r.revision, String(row.snapshot_version));
  assert.is(String(row.history_version), String(row.snapshot_version));
  assert.equal(next, { chatId: chat.chat_id, runnerId: fence.runnerId, historyVersion: String(row.history_version), generationAttempt: "0" });
  const { rows: turn } = await db.pool.query<{ candidate_message_id: string }>(
    "select candidate_message_id from chat_private.turn_progress where chat_id = $1 and finished_at is null", [chat.chat_id]);
  assert.is(turn[0]!.candidate_message_id, stored[2]!.id);
});

test("the first failing element decides a step's error, in input order, and nothing is written", async () => {
  const chat = await createChat(db, user, "bad rows");
  const fence = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  const receipt = { ...assistantText("not mine"), kind: "receipt" };
  const badRole = { role: "robot", content: [] };
  assert.is(await sqlState(commitStep(db, fence, [assistantText("ok"), badRole, receipt])), "22P02");
  assert.is(await sqlState(commitStep(db, fence, [assistantText("ok"), receipt, badRole])), "RCFRB");
  assert.is(await sqlState(commitStep(db, fence, [assistantText("ok"), { role: "assistant" }, receipt])), "23502");
  assert.is(await sqlState(commitStep(db, fence, [receipt])), "RCFRB");
  // Within one element the kind is checked before anything else.
  assert.is(await sqlState(commitStep(db, fence, [{ ...badRole, kind: "receipt" }])), "RCFRB");
  assert.is(await sqlState(commitStep(db, fence, { role: "assistant" } as unknown as object[])), "CIINV");
  assert.is(await messageCount(chat.chat_id), 1);
  const after = await chatRow(db, chat.chat_id);
  assert.is(after.snapshot_version, before.snapshot_version);
  assert.is(after.history_version, before.history_version);
  assert.is(after.generation_attempt, before.generation_attempt);
});

test("a step without rows bumps snapshot_version only: the fence does not move", async () => {
  const chat = await createChat(db, user, "empty step");
  const fence = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  const next = await commitStep(db, fence, [], { steps: 1 });
  assert.equal(next, fence);
  const after = await chatRow(db, chat.chat_id);
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1);
  assert.is(after.history_version, before.history_version);
  assert.is(String(after.generation_attempt), "1");
});

test("acquire_lease bumps snapshot_version once, starts attempt + 1 and returns current_fence", async () => {
  const chat = await createChat(db, user, "acquire");
  const before = await chatRow(db, chat.chat_id);
  const fence = await acquire(db, chat.chat_id);
  const after = await chatRow(db, chat.chat_id);
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1);
  assert.is(Number(after.generation_attempt), Number(before.generation_attempt) + 1);
  assert.equal(fence, await currentFence(db, chat.chat_id));
});

test("acquire_lease: a live lease refuses (CHLSD); the default length comes from the lease_seconds setting", async () => {
  const chat = await createChat(db, user, "lease length");
  await db.pool.query("update chat_private.settings set value = '45' where name = 'lease_seconds'");
  try {
    await acquire(db, chat.chat_id);
    const { rows } = await db.pool.query<{ seconds: number }>(
      "select extract(epoch from expires_at - acquired_at)::int as seconds from chat_private.chat_leases where chat_id = $1", [chat.chat_id]);
    assert.is(rows[0]!.seconds, 45);
    assert.is(await sqlState(acquire(db, chat.chat_id)), "CHLSD");
  } finally {
    await db.pool.query("update chat_private.settings set value = '30' where name = 'lease_seconds'");
  }
});

test("a lease removed by the transaction a runner waited for is seen: CHFNC, nothing written", async () => {
  const chat = await createChat(db, user, "lease goes");
  const fence = await acquire(db, chat.chat_id);
  const holder = await connection();
  const runner = await connection();
  await holder.client.query("begin");
  await holder.client.query("select 1 from chat_public.chats where id = $1 for update", [chat.chat_id]);
  await holder.client.query("delete from chat_private.chat_leases where chat_id = $1", [chat.chat_id]);
  const committing = sqlState(commitStep(db, fence, [assistantText("too late")], {}, runner.client));
  await waitForLock(db, runner.pid);
  await holder.client.query("commit");
  assert.is(await committing, "CHFNC");
  assert.is(await messageCount(chat.chat_id), 1);
});

test("a transition that waited for a client commit is checked against the chat as that commit left it", async () => {
  // Refused after the wait: the interrupt committed while commit_step waited (the fence itself still holds).
  const running = await createChat(db, user, "interrupted while waiting");
  const fence = await acquire(db, running.chat_id);
  const client = await connection();
  const runner = await connection();
  await client.client.query("begin");
  await client.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  await client.client.query("select chat_public.interrupt_chat($1)", [running.chat_id]);
  const committing = commitStep(db, fence, [assistantText("racing the interrupt")], {}, runner.client);
  const refused = committing.then(() => null, (error: { code?: string; detail?: string }) => [error.code, error.detail]);
  await waitForLock(db, runner.pid);
  await client.client.query("commit");
  assert.equal(await refused, ["CHTRN", "interrupting"]);

  // Allowed after the wait: a waiting chat became runnable while acquire_lease waited.
  const waiting = await createChat(db, user, "first turn");
  await finishTurn(db, await acquire(db, waiting.chat_id));
  await client.client.query("begin");
  await client.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  await client.client.query("select * from chat_public.send_chat_message($1, $2)",
    [waiting.chat_id, JSON.stringify([{ type: "text", text: "second turn" }])]);
  const acquiring = acquire(db, waiting.chat_id, "waiter", runner.client);
  await waitForLock(db, runner.pid);
  await client.client.query("commit");
  const acquired: Fence = await acquiring;
  assert.equal(acquired, await currentFence(db, waiting.chat_id));
  assert.is((await chatRow(db, waiting.chat_id)).status, "running");
});

test("commit_step_and_finish_turn is commit_step then finish_turn: two bumps, step rows before the receipt", async () => {
  const chat = await createChat(db, user, "fused", structured());
  const fence = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  const call = { type: "tool-call", tool_call_id: "final", tool_name: "coder_structured_output", args: {} };
  const { rows } = await db.pool.query<{ runner_id: string; history_version: string; generation_attempt: string; status: string }>(
    "select * from chat_private.commit_step_and_finish_turn($1, $2, $3, $4, $5, $6, $7)",
    [chat.chat_id, fence.runnerId, fence.historyVersion, fence.generationAttempt,
      JSON.stringify([{ role: "assistant", content: [call] }]), '{"steps": 1, "candidate": {"value": 1, "step": 1, "message_index": 0}}', null]);
  const s = Number(before.snapshot_version);
  assert.equal(rows[0], { runner_id: fence.runnerId, history_version: String(s + 1), generation_attempt: "0", status: "waiting" });
  const after = await chatRow(db, chat.chat_id);
  assert.equal([after.snapshot_version, after.history_version, after.generation_attempt, after.status].map(String),
    [String(s + 2), String(s + 1), "0", "waiting"]);
  const { rows: stored } = await db.pool.query<{ kind: string; revision: string }>(
    "select kind, revision from chat_public.chat_messages where chat_id = $1 and id > $2 order by id", [chat.chat_id, chat.message_id]);
  assert.equal(stored, [{ kind: "message", revision: String(s + 1) }, { kind: "receipt", revision: String(s + 2) }]);
  assert.is(await count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chat.chat_id]), 0);
});

// commit_step_and_finish_turn ends the turn under commit_step's lock without finish_turn's checks: that is sound
// only while commit_step is allowed exactly where finish_turn is and leaves the status where it found it.
test("commit_step and finish_turn are allowed from the same states, and commit_step keeps the status", async () => {
  const { rows } = await db.pool.query<{ transition: string; from_state: string; to_state: string[] }>(
    `select transition, from_state, to_state from chat_private.transition_rules
     where transition in ('commit_step', 'finish_turn') and allowed order by from_state, transition`);
  const from = (transition: string) => rows.filter((r) => r.transition === transition).map((r) => r.from_state);
  assert.ok(from("commit_step").length > 0);
  assert.equal(from("commit_step"), from("finish_turn"));
  for (const rule of rows.filter((r) => r.transition === "commit_step")) assert.equal(rule.to_state, [rule.from_state]);
});

/** Runs a fused final commit on a new structured chat with track_functions on and returns how often each of
 * `functions` (chat_private) was called in its transaction, by name. */
async function fusedCommitCalls(name: string, functions: string[]): Promise<Record<string, number>> {
  const chat = await createChat(db, user, name, structured());
  const fence = await acquire(db, chat.chat_id);
  const client = await db.pool.connect();
  try {
    await client.query("begin");
    await client.query("set local track_functions = 'all'");
    const call = { type: "tool-call", tool_call_id: "final", tool_name: "coder_structured_output", args: {} };
    const { rows: [finished] } = await client.query<{ status: string }>(
      "select status::text from chat_private.commit_step_and_finish_turn($1, $2, $3, $4, $5, $6, $7)",
      [chat.chat_id, fence.runnerId, fence.historyVersion, fence.generationAttempt,
        JSON.stringify([{ role: "assistant", content: [call] }]), '{"steps": 1, "candidate": {"value": 1, "step": 1, "message_index": 0}}', null]);
    assert.is(finished!.status, "waiting");
    const { rows } = await client.query<{ name: string; calls: number }>(
      `select funcname as name, calls::int from pg_stat_xact_user_functions
       where schemaname = 'chat_private' and funcname = any($1) order by funcname`, [functions]);
    await client.query("commit");
    return Object.fromEntries(rows.map((row) => [row.name, row.calls]));
  } finally {
    client.release();
  }
}

test("the fused final commit locks the chat and checks the fence once", async () => {
  assert.equal(await fusedCommitCalls("locks once", ["_lock_for_worker_transition", "_finish_locked_turn", "finish_turn"]),
    { _finish_locked_turn: 1, _lock_for_worker_transition: 1 });
});

test("a receipt works out a webhook event only for an owner with an enabled endpoint", async () => {
  const helpers = ["webhook_enqueue", "webhook_response_subject"];
  assert.equal(await fusedCommitCalls("no endpoint", helpers), {});
  const { rows: [endpoint] } = await db.pool.query<{ id: string }>(
    "select chat_private.webhook_add($1, 'https://example.test/hook', null, $2) as id",
    [user, `whsec_${Buffer.alloc(32, 1).toString("base64")}`]);
  try {
    assert.equal(await fusedCommitCalls("endpoint", helpers), { webhook_enqueue: 1, webhook_response_subject: 1 });
    assert.is(await count(db, "select 1 from chat_private.webhook_deliveries where endpoint_id = $1", [endpoint!.id]), 1);
  } finally {
    await db.pool.query("delete from chat_private.webhook_deliveries where endpoint_id = $1", [endpoint!.id]);
    await db.pool.query("delete from chat_private.webhook_endpoints where id = $1", [endpoint!.id]);
  }
});

test("worker transitions notify with the chat as each one left it", async () => {
  const chat = await createChat(db, user, "notify", structured());
  await sendMessage(db, user, chat.chat_id, "queued next");
  const listener = new pg.Client({ connectionString: db.url });
  connections.track(listener);
  await listener.connect();
  const received: Record<string, unknown>[] = [];
  listener.on("notification", (message) => received.push(JSON.parse(message.payload ?? "null") as Record<string, unknown>));
  await listener.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chat.chat_id}`)}`);
  const fields = ["status", "archived", "snapshot_version", "history_version", "queue_version", "generation_attempt"];
  const expected: Record<string, unknown>[] = [];
  const expect = async (change: string) => {
    const row = await chatRow(db, chat.chat_id);
    expected.push({ chat_id: chat.chat_id, change, ...Object.fromEntries(fields.map((f) => [f, f.endsWith("version") || f === "generation_attempt" ? Number(row[f]) : row[f]])) });
  };
  const fence = await acquire(db, chat.chat_id);
  await expect("attempt");
  const next = await commitCandidate(db, fence, '"done"');
  await expect("step");
  assert.is(await finishTurn(db, next), "running", "the queued message starts the next turn");
  await expect("turn_finished");
  // Barrier: a round trip on the listening connection delivers the notifications committed before it.
  for (let i = 0; i < 100 && received.length < expected.length; i++) await listener.query("select 1");
  assert.equal(received, expected);
});

test.run();
