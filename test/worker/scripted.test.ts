// The agent loop with the scripted provider (deterministic, not a real model): the default plan lists the
// workspace, reads a file and answers; explicit scripts drive dynamic tools, limits and finish reasons.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, sendMessage, submitToolResults } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  createWorkerChat, fastSettings, makeWorkspaces, messages, setSetting, shape, startTestWorker, turn, waitFor,
  waitForStatus,
} from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "alice");
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

const script = (steps: object[]) => JSON.stringify({ script: steps });

test("scripted default plan: list the workspace, read a file, answer (3 steps, one turn)", async () => {
  const chat = await createWorkerChat(db, user, "what is in my workspace?");
  await waitForStatus(db, chat, "waiting");
  const rows = await messages(db, chat);
  assert.equal(shape(rows), [
    "user:text", "assistant:reasoning,tool-call", "tool:tool-result", "assistant:tool-call", "tool:tool-result", "assistant:text",
  ]);
  const list = rows[1]!.content[1]!;
  assert.equal({ name: list.tool_name, args: list.args, pe: list.provider_executed }, { name: "list_files", args: { path: "." }, pe: false });
  const listed = rows[2]!.content[0]!;
  assert.is(listed.is_error, false);
  assert.equal((listed.result as { entries: { path: string }[] }).entries.map((e) => e.path), ["a.txt", "docs"]);
  assert.equal(rows[3]!.content[0]!.args, { path: "a.txt" });
  assert.is(rows[4]!.content[0]!.result, "alpha file\nthe answer is 42\n");
  assert.match(String(rows[5]!.content[0]!.text), /scripted provider/);
  assert.is(rows[5]!.finish?.reason, "stop");
  assert.is(rows[1]!.finish?.reason, "tool-calls");
  const turns = await turn(db, chat);
  assert.equal(turns, [{ steps: 3, recoveries: 0, finished: true }]);
});

test("queued messages run as the next turns, re-acquired in the same job instead of a job hop", async () => {
  const chat = await createWorkerChat(db, user, script([{ delay_ms: 300, text: "first" }]), { workspace: null });
  await waitFor("the first turn to run", async () => (await messages(db, chat)).length >= 1);
  const before = worker.stats.reacquiredInJob;
  for (const word of ["second", "third", "fourth"]) await sendMessage(db, user, chat, script([{ text: word }]));
  await waitFor("all turns", async () => (await turn(db, chat)).filter((t) => t.finished).length === 4 || undefined);
  await waitForStatus(db, chat, "waiting");
  const rows = await messages(db, chat);
  assert.equal(rows.filter((r) => r.role === "assistant").map((r) => r.content[0]!.text), ["first", "second", "third", "fourth"]);
  // The job that promoted a turn usually wins the race against the job the promotion enqueued (that one then
  // finds the lease held and ends); both outcomes are correct, so this only asserts that the shortcut happens.
  assert.ok(worker.stats.reacquiredInJob - before >= 1, `re-acquired in job: ${worker.stats.reacquiredInJob - before} of 3`);
});

test("dynamic tool: the chat pauses with the pending call, then the client result resumes the turn (scripted)", async () => {
  const chat = await createWorkerChat(db, user, script([
    { tool_calls: [{ name: "lookup", args: { q: "x" } }, { name: "list_files", args: { path: "docs" } }] },
    { text: "done with the lookup" },
  ]), { dynamicTools: [{ name: "lookup", description: "client lookup", input_schema: { type: "object" } }] });
  await waitForStatus(db, chat, "requires_action");
  const { rows } = await db.pool.query("select pending_tool_calls from chat_public.chats where id = $1", [chat]);
  const pending = rows[0].pending_tool_calls as { tool_call_id: string; tool_name: string; args: unknown }[];
  assert.is(pending.length, 1);
  assert.equal({ name: pending[0]!.tool_name, args: pending[0]!.args }, { name: "lookup", args: { q: "x" } });
  // The local call of the same batch already ran.
  assert.equal(shape(await messages(db, chat)), ["user:text", "assistant:tool-call,tool-call", "tool:tool-result"]);
  const { rows: leases } = await db.pool.query("select 1 from chat_private.chat_leases where chat_id = $1", [chat]);
  assert.is(leases.length, 0, "no lease (no worker slot) is held while waiting");
  await submitToolResults(db, user, chat, [{ tool_call_id: pending[0]!.tool_call_id, result: { found: true } }]);
  await waitForStatus(db, chat, "waiting");
  const all = await messages(db, chat);
  assert.equal(shape(all), ["user:text", "assistant:tool-call,tool-call", "tool:tool-result", "tool:tool-result", "assistant:text"]);
  assert.is(all.at(-1)!.content[0]!.text, "done with the lookup");
});

test("invalid JSON arguments and unknown tools become tool errors, not crashes", async () => {
  const chat = await createWorkerChat(db, user, script([
    { tool_calls: [{ name: "read_file", args_raw: "{\"path\": " }, { name: "nope", args: {} }], finish: "tool-calls" },
    { text: "recovered" },
  ]));
  await waitForStatus(db, chat, "waiting");
  const rows = await messages(db, chat);
  const results = rows[2]!.content;
  assert.equal(results.map((r) => [r.is_error, (r.result as { error: string }).error]), [
    [true, "the tool arguments are not valid JSON"], [true, "unknown tool: nope"],
  ]);
  assert.equal(rows[1]!.finish?.invalid_tool_arguments, [rows[1]!.content[0]!.tool_call_id]);
  assert.is(rows.at(-1)!.content[0]!.text, "recovered");
});

test("truncated (length) and refused (content-filter) steps keep provenance and never run their tool calls", async () => {
  for (const finish of ["length", "content-filter"]) {
    const chat = await createWorkerChat(db, user, script([
      { text: "partial", tool_calls: [{ name: "read_file", args: { path: "a.txt" } }], finish },
    ]));
    await waitForStatus(db, chat, "waiting");
    const rows = await messages(db, chat);
    assert.equal(shape(rows), ["user:text", "assistant:text"], finish);
    assert.is(rows[1]!.finish?.reason, finish);
    assert.is((rows[1]!.finish?.dropped_tool_calls as unknown[]).length, 1);
  }
});

test("step limit: past max_steps_per_turn the turn finishes", async () => {
  await setSetting(db, "max_steps_per_turn", 2);
  try {
    const loop = { tool_calls: [{ name: "list_files", args: { path: "." } }] };
    const chat = await createWorkerChat(db, user, script([loop, loop, loop, loop]));
    await waitForStatus(db, chat, "waiting");
    assert.equal((await turn(db, chat))[0], { steps: 2, recoveries: 0, finished: true });
    assert.is((await messages(db, chat)).filter((r) => r.role === "assistant").length, 2);
  } finally {
    await setSetting(db, "max_steps_per_turn", 200);
  }
});

test.run();
