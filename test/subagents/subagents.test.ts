// Subagents with the scripted provider (deterministic, not a real model): a structured parent spawns a child, waits
// for it and finalizes; the child never sees the parent's schema or finalizer. Then the tools one by one against
// the SQL functions (no worker: children stay running), including depth 1, idempotent spawn and the runner check.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import {
  chatStatus, count, createUser, interrupt, plantLease, receipts, sendMessage, setStructuredExperiment, structured, type Fence,
} from "../support/chats.ts";
import { WORKER_CHANNEL } from "../../src/channels.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, messages, startTestWorker, testLogger, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { ChatListener } from "../../worker/loop/listener.ts";
import { loadTurnState } from "../../worker/loop/history.ts";
import { openRunTools } from "../../src/mcp/run-tools.ts";
import { subagentToolNames, subagentTools, type SubagentContext } from "../../src/tools/subagents.ts";
import { DEFAULT_TOOL_RESULT_CAP_BYTES, executeTool, toolsForChat, type ToolDefinition } from "../../src/tools/index.ts";

let db: TestDatabase;
let user: string;
let workspacesRoot: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  user = await createUser(db, "parent-owner");
  workspacesRoot = await makeWorkspaces();
});
test.after(async () => {
  await listener?.close();
  await db.drop();
});

const script = (steps: object[]) => JSON.stringify({ script: steps });
const REPORT = { type: "object", properties: { secret_field_name: { type: "string" } }, required: ["secret_field_name"],
  additionalProperties: false };

test("a structured parent spawns a child, waits, and finalizes with its result; the child never sees the schema", async () => {
  await setStructuredExperiment(db, true);
  const worker: RunningWorker = await startTestWorker(db, workspacesRoot);
  try {
    const childScript = script([
      // Neither the finalizer nor the agent tools exist for a child: both calls come back as unknown tools.
      { tool_calls: [{ name: "coder_structured_output", args: { output: { secret_field_name: "x" } } },
        { name: "spawn_agent", args: { prompt: "grandchild" } }] },
      { text: "the child found 42" },
    ]);
    const parent = await createWorkerChat(db, user, script([
      { tool_calls: [{ name: "spawn_agent", args: { prompt: childScript, title: "researcher" } }] },
      { tool_calls: [{ name: "wait_agent", args: { timeout_s: 60 } }] },
      { tool_calls: [{ name: "coder_structured_output", args: { output: { secret_field_name: "42" } } }] },
    ]), { responseFormat: structured("report", REPORT) });
    await waitForStatus(db, parent, "waiting", 60_000);

    const [receipt] = await receipts(db, parent);
    assert.is(receipt?.status, "succeeded", "the parent's structured request succeeded");
    const { rows: children } = await db.pool.query<{ id: string; title: string; owner_id: string; status: string }>(
      "select id, title, owner_id, status::text from chat_public.chats where parent_chat_id = $1", [parent]);
    assert.is(children.length, 1);
    const child = children[0]!;
    assert.equal([child.title, child.owner_id, child.status], ["researcher", user, "waiting"]);

    // The parent's wait_agent result carries the child's answer, and the next parent step came after it.
    const parentRows = await messages(db, parent);
    const waitResult = parentRows.flatMap((r) => r.content).find((p) => p.type === "tool-result" && p.tool_name === "wait_agent");
    const agents = (waitResult?.result as { agents: { agent_id: string; status: string; result: string }[] }).agents;
    assert.equal(agents, [{ agent_id: child.id, title: "researcher", status: "waiting", result: "the child found 42" }]);
    assert.is(waitResult?.is_error, false);

    // The child: no structured request, no turn governed by one, and nothing of the parent's schema anywhere.
    assert.is(await count(db, "select 1 from chat_public.structured_output_requests where chat_id = $1", [child.id]), 0);
    assert.is(await count(db, "select 1 from chat_private.turn_progress where chat_id = $1 and structured_output_request_id is not null",
      [child.id]), 0);
    const childRows = await messages(db, child.id);
    const childResults = childRows.flatMap((r) => r.content).filter((p) => p.type === "tool-result");
    assert.equal(childResults.map((p) => [p.tool_name, p.is_error, (p.result as { error: string }).error]), [
      ["coder_structured_output", true, "unknown tool: coder_structured_output"],
      ["spawn_agent", true, "unknown tool: spawn_agent"],
    ]);
    assert.is(JSON.stringify(childRows).includes("secret_field_name\":{"), false, "the schema is not in the child's history");
    // What the child's model was given: the prompt the loop builds from its history and the tools it offers.
    const state = await loadTurnState(db.pool, child.id, DEFAULT_TOOL_RESULT_CAP_BYTES);
    assert.is(state.structured, null, "no governing request, so no finalizer is offered");
    assert.equal(state.prompt[0], { role: "user", content: [{ type: "text", text: childScript }] });
    assert.not.ok(JSON.stringify(state.prompt).includes("\"report\""));
    const runTools = await openRunTools({ pool: db.pool, log: testLogger, chatId: child.id, runnerId: "00000000-0000-0000-0000-000000000000",
      subscribe: async () => async () => undefined });
    const offered = toolsForChat(state.chat, runTools.tools).specs.map((s) => s.name);
    await runTools.close();
    assert.equal(offered.filter((n) => n === "coder_structured_output" || subagentToolNames.includes(n)), []);
  } finally {
    await worker.stop();
  }
});

// Direct tool calls: the parent holds a planted lease, no worker runs, so children stay `running`.
let listener: ChatListener | undefined;
async function parentWithTools(): Promise<{ fence: Fence; tools: Map<string, ToolDefinition>; ctx: SubagentContext }> {
  const shared = listener ??= new ChatListener(db.url, testLogger);
  const parent = await createWorkerChat(db, user, "plain parent", { workspace: null });
  const fence = await plantLease(db, parent);
  const ctx: SubagentContext = { pool: db.pool, chatId: parent, runnerId: fence.runnerId,
    subscribe: (id, onChange) => shared.subscribe(id, () => onChange()) };
  return { fence, tools: new Map(subagentTools(ctx).map((t) => [t.name, t])), ctx };
}

test("a chat has at most 32 agents (AGLIM): the 32nd spawns, the 33rd is refused, a re-run of a spawned call still answers", async () => {
  const { fence, tools } = await parentWithTools();
  const spawn = (key: string) => db.pool.query<{ id: string }>(
    "select chat_private.spawn_child_chat($1, $2, '[{\"type\":\"text\",\"text\":\"x\"}]', null, $3) as id",
    [fence.chatId, fence.runnerId, key]);
  const children: string[] = [];
  for (let i = 1; i <= 32; i += 1) children.push((await spawn(`limit-${i}`)).rows[0]!.id);
  assert.is(await count(db, "select 1 from chat_public.chats where parent_chat_id = $1", [fence.chatId]), 32);
  assert.is(await sqlState(spawn("limit-33")), "AGLIM");
  assert.is((await spawn("limit-1")).rows[0]!.id, children[0], "the same call after a crash finds its child");
  const refused = await call(tools, "spawn_agent", { prompt: "one more" }, "call-33");
  assert.equal(refused, { result: { error: "this chat already has the maximum of 32 agents" }, isError: true });
  assert.is(await count(db, "select 1 from chat_public.chats where parent_chat_id = $1", [fence.chatId]), 32);
});

async function call(tools: Map<string, ToolDefinition>, name: string, args: object, toolCallId = `call-${name}`) {
  return executeTool(tools.get(name)!, JSON.stringify(args), { workspacesRoot, workspace: null,
    signal: new AbortController().signal, toolCallId });
}

test("spawn is idempotent per tool call; list, message (queued while busy), interrupt; depth 1; unknown agents", async () => {
  const { tools, fence } = await parentWithTools();
  const first = await call(tools, "spawn_agent", { prompt: "do a thing" }, "call-a");
  const again = await call(tools, "spawn_agent", { prompt: "do a thing" }, "call-a");
  const other = await call(tools, "spawn_agent", { prompt: "another" }, "call-b");
  const id = (first.result as { agent_id: string }).agent_id;
  assert.is((again.result as { agent_id: string }).agent_id, id, "a re-run of the same call finds the same child");
  assert.is.not((other.result as { agent_id: string }).agent_id, id);

  const listed = await call(tools, "list_agents", {});
  assert.equal((listed.result as { agents: { status: string }[] }).agents.map((a) => a.status), ["running", "running"]);

  const sent = await call(tools, "message_agent", { agent_id: id, message: "and then this" });
  assert.equal(sent, { result: { agent_id: id, delivered: "queued" }, isError: false });
  const interrupted = await call(tools, "interrupt_agent", { agent_id: id });
  assert.equal(interrupted.result, { agent_id: id, status: "interrupting" });

  // A child cannot spawn (depth 1), even if it called the SQL directly.
  const childFence = await plantLease(db, id);
  const depth = await db.pool.query("select chat_private.spawn_child_chat($1, $2, '[{\"type\":\"text\",\"text\":\"x\"}]', null, null)",
    [id, childFence.runnerId]).catch((e: { code: string }) => e.code);
  assert.is(depth, "AGDEP");

  // The owner cannot push a structured request into a child either (RFCHD), whatever the experiment says.
  await setStructuredExperiment(db, true);
  assert.is(await sqlState(sendMessage(db, user, id, "structured please", structured("report", REPORT))), "RFCHD");

  const unknown = await call(tools, "message_agent", { agent_id: fence.chatId, message: "not my child" });
  assert.equal(unknown, { result: { error: `unknown agent: ${fence.chatId}` }, isError: true });
  const garbage = await call(tools, "wait_agent", { agent_id: "../etc" });
  assert.is(garbage.isError, true);
});

test("a runner that lost the parent's lease can neither spawn nor message", async () => {
  const { tools, fence } = await parentWithTools();
  const spawned = await call(tools, "spawn_agent", { prompt: "x" });
  const id = (spawned.result as { agent_id: string }).agent_id;
  await db.pool.query("update chat_private.chat_leases set runner_id = gen_random_uuid() where chat_id = $1", [fence.chatId]);
  const before = await count(db, "select 1 from chat_public.chats where parent_chat_id = $1", [fence.chatId]);
  const refused = await call(tools, "spawn_agent", { prompt: "y" }, "call-2");
  assert.equal(refused, { result: { error: "this run lost its lease; the call was not made" }, isError: true });
  assert.is((await call(tools, "message_agent", { agent_id: id, message: "z" })).isError, true);
  assert.is(await count(db, "select 1 from chat_public.chats where parent_chat_id = $1", [fence.chatId]), before);
});

test("wait_agent is bounded: a child that never finishes reports running; a settled child returns at once", async () => {
  const { tools } = await parentWithTools();
  const spawned = await call(tools, "spawn_agent", { prompt: "never runs (no worker)" });
  const id = (spawned.result as { agent_id: string }).agent_id;
  const waited = await call(tools, "wait_agent", { agent_id: id, timeout_s: 1 });
  assert.is((waited.result as { status: string; note: string }).status, "running");
  assert.match((waited.result as { note: string }).note, /still running/);
  // Finish the child's turn as a worker would, from another connection, while a wait is in progress: LISTEN wakes it.
  const pending = call(tools, "wait_agent", { agent_id: id, timeout_s: 30 });
  const childFence = await plantLease(db, id);
  await db.pool.query("select chat_private.commit_step($1, $2, $3, $4, $5)", [childFence.chatId, childFence.runnerId,
    childFence.historyVersion, childFence.generationAttempt, JSON.stringify([{ role: "assistant", content: [{ type: "text", text: "child done" }] }])]);
  const { rows } = await db.pool.query("select * from chat_private.current_fence($1)", [id]);
  await db.pool.query("select chat_private.finish_turn($1, $2, $3, $4, null)", [id, rows[0].runner_id, rows[0].history_version, rows[0].generation_attempt]);
  const done = await pending;
  assert.equal(done.result, { agent_id: id, title: "agent", status: "waiting", result: "child done" });
});

test("interrupting a parent interrupts its running subagents (workers hear it); settled children and other chats are left alone", async () => {
  const { tools, fence } = await parentWithTools();
  const parentId = fence.chatId;
  const agentId = async (callId: string) =>
    ((await call(tools, "spawn_agent", { prompt: callId }, callId)).result as { agent_id: string }).agent_id;
  const running = await agentId("call-running");
  const settled = await agentId("call-settled");
  const settledFence = await plantLease(db, settled);
  await db.pool.query("select chat_private.finish_turn($1, $2, $3, $4, null)", [settled, settledFence.runnerId,
    settledFence.historyVersion, settledFence.generationAttempt]);
  const stranger = await createWorkerChat(db, user, "not a child", { workspace: null });
  assert.is(await chatStatus(db, settled), "waiting", "fixture");

  // The worker channel is how a running step hears an interrupt: the child's must be on it.
  const listening = new pg.Client({ connectionString: db.url });
  await listening.connect();
  try {
    const heard = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no worker-channel notification for the child")), 10_000);
      listening.on("notification", (message) => {
        const payload = JSON.parse(message.payload ?? "{}") as { chat_id?: string; status?: string };
        if (payload.chat_id === running) {
          clearTimeout(timer);
          resolve(payload.status ?? "");
        }
      });
    });
    await listening.query(`listen ${pg.escapeIdentifier(WORKER_CHANNEL)}`);
    await interrupt(db, user, parentId);
    assert.is(await heard, "interrupting");
  } finally {
    await listening.end();
  }
  assert.is(await chatStatus(db, parentId), "interrupting");
  assert.is(await chatStatus(db, running), "interrupting");
  assert.is(await chatStatus(db, settled), "waiting");
  assert.is(await chatStatus(db, stranger), "running");

  // A parent that is no longer running still stops a child it left running.
  const { tools: laterTools, fence: laterFence } = await parentWithTools();
  const orphan = ((await call(laterTools, "spawn_agent", { prompt: "outlives its parent's turn" }, "call-orphan")).result as
    { agent_id: string }).agent_id;
  await db.pool.query("select chat_private.finish_turn($1, $2, $3, $4, null)", [laterFence.chatId, laterFence.runnerId,
    laterFence.historyVersion, laterFence.generationAttempt]);
  assert.is(await chatStatus(db, laterFence.chatId), "waiting", "fixture");
  await interrupt(db, user, laterFence.chatId);
  assert.is(await chatStatus(db, laterFence.chatId), "waiting");
  assert.is(await chatStatus(db, orphan), "interrupting");
});

test.run();
