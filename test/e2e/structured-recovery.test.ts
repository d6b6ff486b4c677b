// Kill tests for structured output (scripted provider, deterministic; real worker processes; mock hook server, not a
// real integration): a worker dies at a named fault point (process.exit(137), like SIGKILL), others recover the chat
// after the lease expires. Whatever the point, exactly one receipt is committed, the right one, and the repair budget
// survives the crashes.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  createWorkerChat, makeWorkspaces, runUntilWaiting, setSetting, spawnWorkerProcess, turn, waitFor, waitForStatus,
} from "../support/worker.ts";
import { addStopHook, removeStopHooks, startHookServer } from "../hooks/mock-hook-server.ts";

let db: TestDatabase;
let root: string;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await setSetting(db, "lease_seconds", 2);
  await setSetting(db, "max_recoveries_per_turn", 3);
  await setStructuredExperiment(db, true);
  root = await makeWorkspaces();
  user = await createUser(db, "kill");
});
test.after(async () => {
  await db.drop();
});

const REPORT = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
const finalize = (argsRaw: string) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: argsRaw }] });
const script = (steps: object[]) => JSON.stringify({ script: steps });

async function receipts(chatId: string): Promise<{ status: string; code: string | null; value: string | null }[]> {
  const { rows } = await db.pool.query<{ status: string; code: string | null; value: string | null }>(
    `select structured_output ->> 'status' as status, structured_output -> 'error' ->> 'code' as code,
            (structured_output -> 'value')::text as value
     from chat_public.chat_messages where chat_id = $1 and kind = 'receipt' order by id`, [chatId]);
  return rows;
}

/** The open turn's durable counts: what a crash left behind. */
async function openTurn(chatId: string): Promise<{ steps: number; candidate_present: boolean }[]> {
  const { rows } = await db.pool.query<{ steps: number; candidate_present: boolean }>(
    "select steps, candidate_present from chat_private.turn_progress where chat_id = $1 and finished_at is null", [chatId]);
  return rows;
}

async function crashAt(point: string): Promise<void> {
  const doomed = spawnWorkerProcess(db, root, { CHATD_FAULTS: `${point}:exit` });
  assert.is(await doomed.exited, 137, `the worker died at ${point}`);
}

async function recoverWithHealthyWorker(chatId: string): Promise<void> {
  const survivor = spawnWorkerProcess(db, root);
  try {
    await waitFor("the receipt", async () => (await receipts(chatId)).length > 0 || undefined);
    await waitForStatus(db, chatId, "waiting");
  } finally {
    survivor.kill("SIGTERM");
    await survivor.exited;
  }
}

test("killed in front of the final commit: nothing of the step is there; the recovered turn commits exactly one success", async () => {
  const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":7}}')]),
    { responseFormat: structured("report", REPORT), workspace: null });
  await crashAt("before_final_commit");
  assert.equal(await receipts(chat), []);
  assert.equal(await openTurn(chat), [{ steps: 0, candidate_present: false }], "no half-committed turn: no step, no candidate");
  await recoverWithHealthyWorker(chat);
  assert.equal(await receipts(chat), [{ status: "succeeded", code: null, value: '{"n": 7}' }]);
  assert.equal((await turn(db, chat)).map((t) => t.recoveries), [1]);
});

test("configured fault points do not change the commit path: the candidate and its receipt are one transaction", async () => {
  const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":9}}')]),
    { responseFormat: structured("report", REPORT), workspace: null });
  // Both fire only while a stop hook holds the turn open after the step; without one the worker runs the turn through.
  assert.is(await runUntilWaiting(db, root, chat, { CHATD_FAULTS: "after_assistant_commit:exit,after_candidate_commit:exit" }), 0,
    "a graceful exit: no fault point was reached");
  assert.equal(await receipts(chat), [{ status: "succeeded", code: null, value: '{"n": 9}' }]);
  const { rows } = await db.pool.query<{ kind: string; xmin: string }>(
    "select kind::text, xmin::text from chat_public.chat_messages where chat_id = $1 and role <> 'user' order by id", [chat]);
  assert.equal(rows.map((r) => r.kind), ["message", "message", "receipt"], "the finalizer call, its accepted result, the receipt");
  assert.is(new Set(rows.map((r) => r.xmin)).size, 1, "all written by one transaction");
});

// Without a stop hook the candidate and the receipt are one transaction (the test above and the next). With one, the
// hooks run between them, so a crash there leaves a durable candidate and no receipt.
test("killed after the candidate commit, before the receipt (a stop hook is enabled): the recovered turn commits exactly one success", async () => {
  const hook = await startHookServer();
  await addStopHook(db, hook.url);
  try {
    const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":123456789012345678901234567890}}'), finalize('{"output":{"n":2}}')]),
      { responseFormat: structured("report", REPORT), workspace: null });
    await crashAt("after_candidate_commit");
    assert.equal([await receipts(chat), await openTurn(chat)], [[], [{ steps: 1, candidate_present: true }]],
      "the candidate is committed, the receipt is not");
    const calls = () => hook.calls.filter((call) => call.payload.chat_id === chat).length;
    assert.is(calls(), 0, "the worker died before the hooks ran");
    await recoverWithHealthyWorker(chat);
    assert.equal(await receipts(chat), [{ status: "succeeded", code: null, value: '{"n": 123456789012345678901234567890}' }],
      "the durable candidate closed the turn; the model was not asked again");
    assert.is(calls(), 1, "the recovering worker ran the hook before finishing");
    assert.equal((await turn(db, chat)).map((t) => t.recoveries), [1]);
  } finally {
    await removeStopHooks(db);
    await hook.close();
  }
});

test("killed after the receipt commit: still exactly one receipt", async () => {
  const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":5}}')]),
    { responseFormat: structured("report", REPORT), workspace: null });
  await crashAt("after_receipt_commit");
  assert.equal(await receipts(chat), [{ status: "succeeded", code: null, value: '{"n": 5}' }]);
  const survivor = spawnWorkerProcess(db, root);
  try {
    await waitForStatus(db, chat, "waiting");
    // Let the survivor's sweep look at the chat: nothing is runnable, so nothing more is written.
    await db.pool.query("select chat_private.sweep_expired_leases()");
    assert.equal((await receipts(chat)).length, 1);
  } finally {
    survivor.kill("SIGTERM");
    await survivor.exited;
  }
});

test("the repair budget survives two crashes: rejection, kill, rejection, kill, rejection fails the request", async () => {
  const bad = (n: number) => finalize(`{"output":{"n":"not a number ${n}"}}`);
  const chat = await createWorkerChat(db, user, script([bad(1), bad(2), bad(3), finalize('{"output":{"n":4}}')]),
    { responseFormat: structured("report", REPORT), workspace: null });
  await crashAt("after_placeholder_commit");
  await crashAt("after_placeholder_commit");
  await recoverWithHealthyWorker(chat);
  assert.equal(await receipts(chat), [{ status: "failed", code: "validation_exhausted", value: null }]);
  const { rows } = await db.pool.query<{ rejected_batches: number; recoveries: number; steps: number }>(
    "select rejected_batches, recoveries, steps from chat_private.turn_progress where chat_id = $1", [chat]);
  assert.equal(rows, [{ rejected_batches: 3, recoveries: 2, steps: 3 }], "the fourth (valid) step never ran");
});

test.run();
