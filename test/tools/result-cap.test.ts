// The tool result cap (CHATD_TOOL_RESULT_CAP_BYTES): every tool's output is kept up to the cap and cut after it
// with a note the model reads; read_file cuts the file itself at the cap. At N and N + 1 in the registry, in
// read_file, and end to end: what the worker stores and what GET /api/chat/:id/messages returns.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  DEFAULT_TOOL_RESULT_CAP_BYTES, executeTool, READ_ONLY_DEPLOYMENT, toolDeploymentFromEnv, workspaceTools, type ToolDefinition,
} from "../../src/tools/index.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { startTestApi, textContent, type TestApi } from "../api/harness.ts";
import { makeWorkspaces, startTestWorker, waitForStatus } from "../support/worker.ts";

const CAP = 4096;
let root: string;
let t: TestApi;
let worker: RunningWorker;

test.before(async () => {
  root = await makeWorkspaces();
  await writeFile(join(root, "ws", "at-cap.txt"), "a".repeat(CAP));
  await writeFile(join(root, "ws", "over-cap.txt"), "b".repeat(CAP + 1));
  t = await startTestApi();
  worker = await startTestWorker(t.db, root, { tools: { ...READ_ONLY_DEPLOYMENT, resultCapBytes: CAP } });
});
test.after(async () => {
  await worker.stop();
  await t.close();
});

const signal = new AbortController().signal;
const echo: ToolDefinition = { name: "echo", description: "", inputSchema: { type: "object" }, kind: "internal",
  execute: async (args) => ({ result: args.value ?? null, isError: false }) };
const run = (tool: ToolDefinition, args: object) =>
  executeTool(tool, JSON.stringify(args), { workspacesRoot: root, workspace: "ws", signal, outputCapBytes: CAP });
const readFile = workspaceTools.find((tool) => tool.name === "read_file")!;

test("the registry keeps an output of N bytes whole and cuts N + 1 to N with a note (text or JSON)", async () => {
  assert.equal(await run(echo, { value: "é".repeat(CAP / 2) }), { result: "é".repeat(CAP / 2), isError: false });
  const over = await run(echo, { value: `${"é".repeat(CAP / 2 - 1)}abc` });
  assert.is(over.result, `${"é".repeat(CAP / 2 - 1)}ab\n[truncated: the tool output had ${CAP + 1} bytes; showing the first ${CAP}]`);
  // An object is measured and cut as its JSON text.
  const object = { items: "x".repeat(CAP - 12) };
  assert.is(JSON.stringify(object).length, CAP);
  assert.equal((await run(echo, { value: object })).result, object);
  const cut = (await run(echo, { value: { items: "x".repeat(CAP - 11) } })).result as string;
  assert.ok(cut.startsWith(`{"items":"xxx`));
  assert.ok(cut.endsWith(`\n[truncated: the tool output had ${CAP + 1} bytes; showing the first ${CAP}]`));
});

test("read_file keeps a file of N bytes whole and cuts one of N + 1 at N with a note", async () => {
  assert.equal(await run(readFile, { path: "at-cap.txt" }), { result: "a".repeat(CAP), isError: false });
  const over = await run(readFile, { path: "over-cap.txt" });
  assert.is(over.result, `${"b".repeat(CAP)}\n[truncated: showing the first ${CAP} of ${CAP + 1} bytes]`);
});

test("end to end: the worker stores read_file results cut at the cap, and the transcript returns them so", async () => {
  const { token } = await t.user("reader");
  const steps = [{ tool_calls: [{ name: "read_file", args: { path: "at-cap.txt" } }, { name: "read_file", args: { path: "over-cap.txt" } }] },
    { text: "read both" }];
  const created = await t.gql<{ createChat: { result: { chatId: string } } }>(
    `mutation($c: JSON!) { createChat(input: {content: $c, workspace: "ws"}) { result { chatId } } }`,
    { c: textContent(JSON.stringify({ script: steps })) }, token);
  const chatId = created.data!.createChat.result.chatId;
  await waitForStatus(t.db, chatId, "waiting");
  const { rows } = await t.db.pool.query<{ content: { type: string; result: unknown }[] }>(
    "select content from chat_public.chat_messages where chat_id = $1 and role = 'tool' order by id", [chatId]);
  const stored = rows.flatMap((row) => row.content.filter((part) => part.type === "tool-result").map((part) => part.result));
  const overCap = `${"b".repeat(CAP)}\n[truncated: showing the first ${CAP} of ${CAP + 1} bytes]`;
  assert.equal(stored, ["a".repeat(CAP), overCap]);

  const response = await fetch(`${t.api.url}/api/chat/${chatId}/messages`, { headers: { authorization: `Bearer ${token}` } });
  const { messages } = await response.json() as { messages: { parts: { type: string; output?: unknown }[] }[] };
  const outputs = messages.flatMap((m) => m.parts.filter((part) => part.type === "dynamic-tool").map((part) => part.output));
  assert.equal(outputs, ["a".repeat(CAP), overCap]);
});

test("CHATD_TOOL_RESULT_CAP_BYTES: 64 KiB by default, from 1024 to 1 MiB", () => {
  assert.is(toolDeploymentFromEnv({}).resultCapBytes, DEFAULT_TOOL_RESULT_CAP_BYTES);
  assert.is(DEFAULT_TOOL_RESULT_CAP_BYTES, 65536);
  assert.is(toolDeploymentFromEnv({ CHATD_TOOL_RESULT_CAP_BYTES: "1024" }).resultCapBytes, 1024);
  assert.is(toolDeploymentFromEnv({ CHATD_TOOL_RESULT_CAP_BYTES: "1048576" }).resultCapBytes, 1048576);
  for (const bad of ["1023", "1048577", "4k", "-1"]) {
    assert.throws(() => toolDeploymentFromEnv({ CHATD_TOOL_RESULT_CAP_BYTES: bad }), /CHATD_TOOL_RESULT_CAP_BYTES/);
  }
});

test.run();
