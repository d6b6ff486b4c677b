// Results of read-only workspace calls ride with the next commit (worker/loop/results.ts, transitions.ts): the tool row
// and the following assistant step are inserted by one transaction (the same xmin). Results of a write tool are
// committed on their own before the next model step, as before. Losing a worker between the two is covered by the
// after_tool_results kill test in recovery.test.ts. Scripted provider (deterministic, not a real model).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, shape, startTestWorker, turn, waitForStatus } from "../support/worker.ts";
import { READ_ONLY_DEPLOYMENT } from "../../src/tools/index.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  worker = await startTestWorker(db, await makeWorkspaces(), { tools: { ...READ_ONLY_DEPLOYMENT, writeTools: true } });
  user = await createUser(db, "dora");
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

/** Rows of the chat with the id of the transaction that inserted each. */
async function rowsWithXmin(chatId: string): Promise<{ shape: string; xmin: string }[]> {
  const { rows } = await db.pool.query<{ role: string; content: { type: string }[]; xmin: string }>(
    "select role::text, content, xmin::text from chat_public.chat_messages where chat_id = $1 and kind = 'message' order by id", [chatId]);
  return rows.map((r) => ({ shape: shape([{ role: r.role, content: r.content } as never])[0]!, xmin: r.xmin }));
}

test("read-only results are committed with the next assistant step, in one transaction", async () => {
  const chat = await createWorkerChat(db, user, "what is in my workspace?");
  await waitForStatus(db, chat, "waiting");
  const rows = await rowsWithXmin(chat);
  assert.equal(rows.map((r) => r.shape), [
    "user:text", "assistant:reasoning,tool-call", "tool:tool-result", "assistant:tool-call", "tool:tool-result", "assistant:text",
  ]);
  assert.is.not(rows[1]!.xmin, rows[2]!.xmin, "the assistant step with the calls is committed before the calls run");
  assert.is(rows[2]!.xmin, rows[3]!.xmin, "list_files' result rides with the next step");
  assert.is(rows[4]!.xmin, rows[5]!.xmin, "read_file's result rides with the final answer");
  assert.equal(await turn(db, chat), [{ steps: 3, recoveries: 0, finished: true }]);
});

test("a write tool's result is committed on its own before the next model step", async () => {
  const script = JSON.stringify({ script: [
    { tool_calls: [{ name: "write_file", args: { path: "deferred-note.txt", content: "kept\n" } }] },
    { text: "written" },
  ] });
  const chat = await createWorkerChat(db, user, script);
  await waitForStatus(db, chat, "waiting");
  const rows = await rowsWithXmin(chat);
  assert.equal(rows.map((r) => r.shape), ["user:text", "assistant:tool-call", "tool:tool-result", "assistant:text"]);
  assert.is.not(rows[2]!.xmin, rows[3]!.xmin, "the write's result is durable before the next step runs");
  assert.is.not(rows[1]!.xmin, rows[2]!.xmin);
});

test.run();
