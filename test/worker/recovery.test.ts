// Kill tests with real worker processes (scripted provider, deterministic): a worker dies at a named fault point
// (process.exit(137), like SIGKILL mid-step), a second worker process recovers the chat after the lease expires
// and its sweep re-enqueues it. The turn completes once; no message is lost or duplicated. A turn that kills
// every worker fails after max_recoveries_per_turn, and the chat's queue stays usable.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, sendMessage } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider } from "../support/mock-providers/index.ts";
import {
  addModelConfig, createWorkerChat, makeWorkspaces, messages, runUntilWaiting, setSetting, shape, spawnWorkerProcess, turn, waitFor,
  waitForStatus,
} from "../support/worker.ts";

let db: TestDatabase;
let root: string;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await setSetting(db, "lease_seconds", 2);
  await setSetting(db, "max_recoveries_per_turn", 1);
  root = await makeWorkspaces();
  user = await createUser(db, "erin");
});
test.after(async () => {
  await db.drop();
});

/** The scripted default plan's complete transcript: list, read, answer. */
const COMPLETE = ["user:text", "assistant:reasoning,tool-call", "tool:tool-result", "assistant:tool-call", "tool:tool-result", "assistant:text"];

async function stopProcess(child: ReturnType<typeof spawnWorkerProcess>): Promise<void> {
  child.kill("SIGTERM");
  await child.exited;
}

/** What each crash leaves committed: the turn is open, and nothing after the fault point is in it. The list and read
 * results are held back to ride with the next commit (results.ts), so a crash before that commit loses them and the
 * survivor runs the call again; exactly one result is committed either way. before_final_commit stands in front of
 * the one transaction that commits the final answer and finishes the turn: none of it may be there. */
const AT_CRASH: Record<string, { rows: string[]; steps: number }> = {
  provider_stream: { rows: ["user:text"], steps: 0 },
  after_assistant_commit: { rows: COMPLETE.slice(0, 2), steps: 1 },
  during_tool_execution: { rows: COMPLETE.slice(0, 2), steps: 1 },
  after_tool_results: { rows: COMPLETE.slice(0, 2), steps: 1 },
  before_final_commit: { rows: COMPLETE.slice(0, 4), steps: 2 },
};

for (const [point, atCrash] of Object.entries(AT_CRASH)) {
  test(`worker killed at ${point}: a second worker process recovers the turn exactly once`, async () => {
    const chat = await createWorkerChat(db, user, `kill at ${point}`);
    const doomed = spawnWorkerProcess(db, root, { CHATD_FAULTS: `${point}:exit` });
    assert.is(await doomed.exited, 137, "the first worker died at the fault point");
    assert.equal(shape(await messages(db, chat)), atCrash.rows, "what the crash left committed");
    assert.equal(await turn(db, chat), [{ steps: atCrash.steps, recoveries: 0, finished: false }], "the turn is still open");
    const survivor = spawnWorkerProcess(db, root);
    try {
      await waitFor("the recovered turn to finish", async () => (await turn(db, chat))[0]?.finished);
      await waitForStatus(db, chat, "waiting");
      const rows = await messages(db, chat);
      assert.equal(shape(rows), COMPLETE);
      // No duplicate tool calls or results: every call id appears once as a call and once as a result.
      const calls = rows.flatMap((r) => r.content.filter((p) => p.type === "tool-call").map((p) => p.tool_call_id));
      const results = rows.flatMap((r) => r.content.filter((p) => p.type === "tool-result").map((p) => p.tool_call_id));
      assert.equal(results, calls);
      assert.equal(await turn(db, chat), [{ steps: 3, recoveries: 1, finished: true }]);
    } finally {
      await stopProcess(survivor);
    }
  });
}

test("a configured fault point does not change the commit path: a final answer and its turn's end are one transaction", async () => {
  const chat = await createWorkerChat(db, user, JSON.stringify({ script: [{ text: "done" }] }), { workspace: null });
  // after_assistant_commit fires only after a step that leaves the turn open; this one-step turn never gets there.
  assert.is(await runUntilWaiting(db, root, chat, { CHATD_FAULTS: "after_assistant_commit:exit" }), 0,
    "a graceful exit: the fault point was never reached");
  const { rows } = await db.pool.query<{ step: string; turn: string }>(
    `select (select xmin::text from chat_public.chat_messages where chat_id = $1 and role = 'assistant') as step,
            (select xmin::text from chat_private.turn_progress where chat_id = $1) as turn`, [chat]);
  assert.is(rows[0]!.step, rows[0]!.turn, "the step and the finished turn were written by the same transaction");
});

test("a turn that crashes its worker every time fails after max_recoveries_per_turn; the queue stays usable", async () => {
  const chat = await createWorkerChat(db, user, "always crash");
  const first = spawnWorkerProcess(db, root, { CHATD_FAULTS: "provider_stream:exit" });
  assert.is(await first.exited, 137);
  // The second crashing worker sweeps the first crash (recovery 1, within the bound), runs the turn and dies too.
  const second = spawnWorkerProcess(db, root, { CHATD_FAULTS: "provider_stream:exit" });
  assert.is(await second.exited, 137);
  const healthy = spawnWorkerProcess(db, root);
  try {
    await waitForStatus(db, chat, "error");
    const { rows } = await db.pool.query("select last_error from chat_public.chats where id = $1", [chat]);
    assert.is(rows[0].last_error.kind, "recovery_limit");
    assert.equal(await turn(db, chat), [{ steps: 0, recoveries: 2, finished: true }]);
    assert.equal(shape(await messages(db, chat)), ["user:text"], "nothing half-written was committed");
    await sendMessage(db, user, chat, JSON.stringify({ script: [{ text: "working again" }] }));
    await waitFor("the next turn", async () => (await turn(db, chat))[1]?.finished);
    await waitForStatus(db, chat, "waiting");
    const all = await messages(db, chat);
    assert.equal(shape(all), ["user:text", "user:text", "assistant:text"]);
    assert.is(all.at(-1)!.content[0]!.text, "working again");
  } finally {
    await stopProcess(healthy);
  }
});

test("SIGTERM mid-step (mock openai-chat held at a barrier): the step is abandoned, the lease released at once", async () => {
  const server = await startMockProvider();
  try {
    await addModelConfig(db, "held", "openai-chat", server.url);
    const reached = barrier();
    const release = barrier();
    server.enqueue({ text: ["never ", "committed"], hold: { afterEvents: 2, release: release.promise, reached: reached.resolve } },
      { text: ["after the restart"] });
    const chat = await createWorkerChat(db, user, "shutdown", { model: "held", workspace: null });
    const first = spawnWorkerProcess(db, root);
    await reached.promise;
    first.kill("SIGTERM");
    assert.is(await first.exited, 0, "a graceful exit");
    release.resolve();
    const { rows } = await db.pool.query("select 1 from chat_private.chat_leases where chat_id = $1", [chat]);
    assert.is(rows.length, 0, "the lease was released, not left to expire");
    assert.equal(shape(await messages(db, chat)), ["user:text"], "the abandoned step wrote nothing");
    const second = spawnWorkerProcess(db, root);
    try {
      await waitForStatus(db, chat, "waiting");
      const all = await messages(db, chat);
      assert.equal(shape(all), ["user:text", "assistant:text"]);
      assert.is(all[1]!.content[0]!.text, "after the restart");
      assert.equal(await turn(db, chat), [{ steps: 1, recoveries: 0, finished: true }], "a release is not a crash");
    } finally {
      await stopProcess(second);
    }
  } finally {
    await server.close();
  }
});

test.run();
