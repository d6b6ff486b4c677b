// Plan mode through the worker loop, against a mock OpenAI Chat Completions server (real HTTP +
// SSE; a mock provider, not a live API) and a deployment with the write and command tools enabled: a plan-mode
// chat is offered only read tools, plan-safe client tools and propose_plan; a write or a command it calls anyway
// is answered with a tool error and changes nothing; propose_plan ends the turn with the plan in the transcript,
// also when the worker dies right after the call is committed. Outside plan mode the same chat writes.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, sendMessage, setPlanMode, text, type InputResult } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import {
  addModelConfig, fastSettings, makeWorkspaces, messages, shape, spawnWorkerProcess, startTestWorker, turn, waitFor,
  waitForStatus,
} from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let root: string;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db, { lease_seconds: 2 });
  server = await startMockProvider();
  await addModelConfig(db, "openai-chat", "openai-chat", server.url);
  root = await makeWorkspaces();
  worker = await startTestWorker(db, root, { tools: { writeTools: true, execTools: true, execTimeoutMs: 5000, execOutputCapBytes: 4096, resultCapBytes: 65536 } });
  user = await createUser(db, "pat");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

const dynamicTools = [
  { name: "lookup", description: "read-only client lookup", input_schema: { type: "object" }, plan_safe: true },
  { name: "deploy", description: "client-side deploy", input_schema: { type: "object" } },
];
const PLAN = "1. Change the answer in a.txt\n2. Run the tests";

async function createPlanChat(content: string, planMode = true): Promise<string> {
  const result = await asUser(db, user, async (client) => (await client.query<InputResult>(
    `select * from chat_public.create_chat(content => $1, model_config_id => 'openai-chat', workspace => 'ws',
       dynamic_tools => $2, plan_mode => $3)`, [text(content), JSON.stringify(dynamicTools), planMode])).rows[0]!);
  return result.chat_id;
}

/** The offered tools among those this test is about (other areas, such as subagents, add their own). */
const CONCERNED = new Set(["list_files", "read_file", "search_files", "write_file", "edit_file", "run_command", "lookup", "deploy",
  "propose_plan"]);
const offered = (index: number) => (server.requests[index]!.body.tools as { function: { name: string } }[])
  .map((t) => t.function.name).filter((name) => CONCERNED.has(name)).sort();
const missing = (path: string) => stat(join(root, "ws", path)).then(() => false, () => true);

let chat: string;

test("plan mode: writes and commands are refused, propose_plan ends the turn with the plan in the transcript", async () => {
  const from = server.requests.length;
  server.enqueue(
    { toolCalls: [
      { id: "w1", name: "write_file", fragments: ['{"path":"planned.txt","content":"x"}'] },
      { id: "x1", name: "run_command", fragments: ['{"command":"touch ran.txt"}'] },
    ] },
    { toolCalls: [{ id: "r1", name: "read_file", fragments: ['{"path":"a.txt"}'] }] },
    { text: ["Here is ", "my plan."], toolCalls: [{ id: "p1", name: "propose_plan", fragments: [JSON.stringify({ plan: PLAN })] }] },
  );
  chat = await createPlanChat("plan a change to a.txt");
  await waitFor("the turn to finish", async () => (await turn(db, chat))[0]?.finished);
  await waitForStatus(db, chat, "waiting");

  assert.equal(offered(from), ["list_files", "lookup", "propose_plan", "read_file", "search_files"]);
  const rows = await messages(db, chat);
  assert.equal(shape(rows), ["user:text", "assistant:tool-call,tool-call", "tool:tool-result,tool-result", "assistant:tool-call",
    "tool:tool-result", "assistant:text,tool-call", "tool:tool-result"]);
  const refusal = "is not available in plan mode; finish exploring and call propose_plan";
  assert.equal(rows[2]!.content.map((p) => [p.result, p.is_error]), [
    [{ error: `write_file ${refusal}` }, true], [{ error: `run_command ${refusal}` }, true]]);
  assert.ok(await missing("planned.txt"), "nothing was written");
  assert.ok(await missing("ran.txt"), "no command ran");
  assert.is(rows[4]!.content[0]!.result, "alpha file\nthe answer is 42\n", "reading still works");
  // The plan is the visible call's argument; its answer is an acknowledgement, and no model step follows it.
  assert.equal(rows[5]!.content[1], { type: "tool-call", tool_call_id: "p1", tool_name: "propose_plan", args: { plan: PLAN },
    provider_executed: false });
  assert.equal([rows[6]!.content[0]!.result, rows[6]!.content[0]!.is_error],
    ["Plan proposed. The turn ends here; the user will review the plan.", false]);
  assert.is(rows[5]!.visibility, "both");
  assert.is(server.requests.length - from, 3, "the turn ended on propose_plan without another request");
  assert.equal(await turn(db, chat), [{ steps: 3, recoveries: 0, finished: true }]);
});

test("leaving plan mode offers the enabled write and command tools again, and they run", async () => {
  await setPlanMode(db, user, chat, false);
  const from = server.requests.length;
  server.enqueue(
    { toolCalls: [
      { id: "w2", name: "write_file", fragments: ['{"path":"plans/plan.md","content":"the plan"}'] },
      { id: "x2", name: "run_command", fragments: ['{"command":"cat plans/plan.md"}'] },
    ] },
    { text: ["Done."] },
  );
  await sendMessage(db, user, chat, text("carry it out"));
  await waitFor("the second turn", async () => (await turn(db, chat))[1]?.finished);
  await waitForStatus(db, chat, "waiting");
  assert.equal(offered(from), ["deploy", "edit_file", "list_files", "lookup", "read_file", "run_command", "search_files", "write_file"]);
  assert.is(await readFile(join(root, "ws", "plans", "plan.md"), "utf8"), "the plan");
  const results = (await messages(db, chat)).at(-2)!.content;
  assert.equal(results.map((p) => p.result), [{ path: "plans/plan.md", bytes: 8, created: true },
    { exit_code: 0, stdout: "the plan", stderr: "" }]);
});

test("plan_safe must be a boolean in a dynamic tool declaration", async () => {
  const attempt = asUser(db, user, (client) => client.query(
    "select * from chat_public.create_chat(content => $1, dynamic_tools => $2)",
    [text("x"), JSON.stringify([{ name: "t", input_schema: { type: "object" }, plan_safe: "yes" }])]));
  await attempt.then(() => assert.unreachable("accepted"), (error: { code?: string; column?: string }) => {
    assert.is(error.code, "CIINV");
    assert.is(error.column, "dynamic_tools[0].plan_safe");
  });
});

test("a worker that dies right after committing propose_plan: the recovering worker answers it and ends the turn", async () => {
  await worker.stop();
  const from = server.requests.length;
  server.enqueue({ toolCalls: [{ id: "p2", name: "propose_plan", fragments: [JSON.stringify({ plan: PLAN })] }] });
  const crashChat = await createPlanChat("plan quickly");
  const doomed = spawnWorkerProcess(db, root, { CHATD_FAULTS: "after_assistant_commit:exit" });
  assert.is(await doomed.exited, 137);
  const survivor = spawnWorkerProcess(db, root);
  try {
    await waitFor("the recovered turn", async () => (await turn(db, crashChat))[0]?.finished);
    await waitForStatus(db, crashChat, "waiting");
  } finally {
    survivor.kill("SIGTERM");
    await survivor.exited;
  }
  assert.equal(shape(await messages(db, crashChat)), ["user:text", "assistant:tool-call", "tool:tool-result"]);
  assert.is(server.requests.length - from, 1, "no model step after the plan");
  assert.equal(await turn(db, crashChat), [{ steps: 1, recoveries: 1, finished: true }]);
});

test.run();
