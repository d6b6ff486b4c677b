// The optional workspace tools and plan mode's tool set, without a database: which tools a chat is offered per
// deployment and mode, write confinement (.., absolute paths, links out of the workspace, a link at the target),
// edit rules, and run_command's working folder, clean environment, exit codes, timeout (the whole process group
// dies) and output caps. A temporary folder per run.
import { mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  endsTurnAfter, executeTool, execTools, proposePlanTool, READ_ONLY_DEPLOYMENT, toolDeploymentFromEnv, toolsForChat,
  WRITE_CAP_BYTES, writeTools, type ToolDefinition, type ToolDeployment, type ToolOutput,
} from "../../src/tools/index.ts";
import { processAlive } from "../../src/process-alive.ts";
import { waitFor } from "../support/wait.ts";
import { tempFolder } from "../support/temp.ts";

let root: string;
const ENABLED: ToolDeployment = { writeTools: true, execTools: true, execTimeoutMs: 400, execOutputCapBytes: 2048, resultCapBytes: 65536 };
const byName = (tools: ToolDefinition[], name: string) => tools.find((t) => t.name === name)!;
const run = (tool: ToolDefinition, args: object, planMode = false): Promise<ToolOutput> =>
  executeTool(tool, JSON.stringify(args), { workspacesRoot: root, workspace: "ws", signal: new AbortController().signal, planMode });
const write = (args: object) => run(byName(writeTools, "write_file"), args);
const edit = (args: object) => run(byName(writeTools, "edit_file"), args);
const command = (line: string, deployment = ENABLED) => run(byName(execTools(deployment), "run_command"), { command: line });
const errorOf = (output: ToolOutput) => (output.isError ? (output.result as { error: string }).error : undefined);
const names = (tools: { specs: { name: string }[] }) => tools.specs.map((s) => s.name).sort();

test.before(async () => {
  root = await tempFolder("chatd-optional-tools-");
  await mkdir(join(root, "ws", "sub"), { recursive: true });
  await mkdir(join(root, "outside"));
  await writeFile(join(root, "ws", "a.txt"), "one two two\n");
  await writeFile(join(root, "outside", "secret.txt"), "SECRET\n");
  await symlink(join(root, "outside"), join(root, "ws", "dir-out"));
  await symlink(join(root, "outside", "secret.txt"), join(root, "ws", "link-out.txt"));
  await symlink(join(root, "outside", "missing.txt"), join(root, "ws", "dangling-out.txt"));
  await symlink(join(root, "ws", "sub"), join(root, "ws", "dir-in"));
});

test("the deployment decides whether write and command tools exist; off by default", () => {
  const chat = { workspace: "ws", dynamicTools: [] };
  assert.equal(names(toolsForChat(chat)), ["list_files", "read_file", "search_files"]);
  const enabled = toolsForChat(chat, [], ENABLED);
  assert.equal(names(enabled), ["edit_file", "list_files", "read_file", "run_command", "search_files", "write_file"]);
  const off = toolsForChat(chat, [], READ_ONLY_DEPLOYMENT);
  assert.is(off.withheld.get("write_file"), "write_file is not enabled in this deployment");
  assert.is(off.withheld.get("run_command"), "run_command is not enabled in this deployment");
  // Without a workspace there is nothing to write to or run in.
  assert.equal(names(toolsForChat({ workspace: null, dynamicTools: [] }, [], ENABLED)), []);
});

test("plan mode: read tools, plan-safe dynamic tools and propose_plan only; the rest is withheld with a reason", () => {
  const dynamicTools = [
    { name: "lookup", input_schema: { type: "object" }, plan_safe: true },
    { name: "deploy", input_schema: { type: "object" } },
  ];
  const runTool: ToolDefinition = { name: "mcp_write", description: "", inputSchema: { type: "object" }, kind: "internal" };
  const tools = toolsForChat({ workspace: "ws", dynamicTools, planMode: true }, [runTool], ENABLED);
  assert.equal(names(tools), ["list_files", "lookup", "propose_plan", "read_file", "search_files"]);
  assert.is(tools.planMode, true);
  for (const name of ["write_file", "edit_file", "run_command", "deploy", "mcp_write"]) {
    assert.is(tools.withheld.get(name), `${name} is not available in plan mode; finish exploring and call propose_plan`);
  }
  // propose_plan exists only in plan mode, also without a workspace.
  assert.not.ok(toolsForChat({ workspace: "ws", dynamicTools }, [], ENABLED).byName.has("propose_plan"));
  assert.equal(names(toolsForChat({ workspace: null, dynamicTools: [], planMode: true })), ["propose_plan"]);
});

test("nothing can register the structured-output finalizer's name", () => {
  const impostor: ToolDefinition = { name: "coder_structured_output", description: "", inputSchema: { type: "object" }, kind: "internal" };
  const tools = toolsForChat({ workspace: "ws", dynamicTools: [{ name: "coder_structured_output" }], planMode: true }, [impostor], ENABLED);
  assert.not.ok(tools.byName.has("coder_structured_output"));
  assert.not.ok(toolsForChat({ workspace: "ws", dynamicTools: [{ name: "coder_structured_output" }] }, [impostor], ENABLED)
    .byName.has("coder_structured_output"));
});

test("executeTool refuses a tool that is not plan-safe in plan mode, whatever tool set it came from", async () => {
  assert.is(errorOf(await run(byName(writeTools, "write_file"), { path: "p.txt", content: "x" }, true)),
    "write_file is not available in plan mode");
  assert.is(errorOf(await run(byName(execTools(ENABLED), "run_command"), { command: "touch plan.txt" }, true)),
    "run_command is not available in plan mode");
  await readFile(join(root, "ws", "plan.txt")).then(() => assert.unreachable("the command ran"), () => undefined);
  assert.equal(await run(proposePlanTool, { plan: "1. read\n2. change" }, true),
    { result: "Plan proposed. The turn ends here; the user will review the plan.", isError: false });
  assert.is(errorOf(await run(proposePlanTool, { plan: "  " }, true)), "plan must be a non-empty string");
});

test("write_file creates and overwrites inside the workspace, creating folders", async () => {
  assert.equal((await write({ path: "new/deep/file.txt", content: "hello" })).result, { path: "new/deep/file.txt", bytes: 5, created: true });
  assert.is(await readFile(join(root, "ws", "new", "deep", "file.txt"), "utf8"), "hello");
  assert.equal((await write({ path: "new/deep/file.txt", content: "héllo" })).result, { path: "new/deep/file.txt", bytes: 6, created: false });
  // Links that stay inside are followed: a folder link and the written file lands in its target.
  assert.equal((await write({ path: "dir-in/via-link.txt", content: "in" })).result, { path: "sub/via-link.txt", bytes: 2, created: true });
  assert.equal((await write({ path: "empty.txt", content: "" })).isError, false);
});

test("write_file refuses escapes: .., absolute paths, links out (folder, file, dangling), the root, caps", async () => {
  assert.is(errorOf(await write({ path: "../outside/x.txt", content: "x" })), "path escapes the workspace");
  assert.is(errorOf(await write({ path: join(root, "outside", "x.txt"), content: "x" })),
    "path must be relative to the workspace (absolute paths are refused)");
  assert.is(errorOf(await write({ path: "dir-out/x.txt", content: "x" })), "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await write({ path: "link-out.txt", content: "x" })), "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await write({ path: "dangling-out.txt", content: "x" })), "dangling-out.txt is a symbolic link to nothing");
  assert.is(errorOf(await write({ path: ".", content: "x" })), "path names the workspace itself, not a file");
  assert.is(errorOf(await write({ path: "sub", content: "x" })), "sub is not a regular file");
  assert.is(errorOf(await write({ path: "a.txt/x", content: "x" })), "a.txt is not a directory");
  assert.is(errorOf(await write({ path: "big.txt", content: "x".repeat(WRITE_CAP_BYTES + 1) })),
    `the file would have ${WRITE_CAP_BYTES + 1} bytes; the limit is ${WRITE_CAP_BYTES}`);
  assert.is(errorOf(await write({ path: "x.txt" })), "content must be a string");
  assert.is(await readFile(join(root, "outside", "secret.txt"), "utf8"), "SECRET\n", "nothing outside changed");
  assert.is(await readlink(join(root, "ws", "link-out.txt")), join(root, "outside", "secret.txt"));
});

test("edit_file replaces exact text once, or every occurrence when asked", async () => {
  await writeFile(join(root, "ws", "e.txt"), "one two two\n");
  assert.is(errorOf(await edit({ path: "e.txt", old_text: "two", new_text: "2" })),
    "old_text occurs 2 times in e.txt; include more context or set replace_all");
  assert.is(errorOf(await edit({ path: "e.txt", old_text: "three", new_text: "3" })), "old_text was not found in e.txt");
  assert.equal((await edit({ path: "e.txt", old_text: "one", new_text: "$& 1" })).result, { path: "e.txt", replacements: 1 });
  assert.equal((await edit({ path: "e.txt", old_text: "two", new_text: "2", replace_all: true })).result, { path: "e.txt", replacements: 2 });
  assert.is(await readFile(join(root, "ws", "e.txt"), "utf8"), "$& 1 2 2\n", "replacement text is literal");
  assert.is(errorOf(await edit({ path: "link-out.txt", old_text: "SECRET", new_text: "x" })),
    "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await edit({ path: "missing.txt", old_text: "a", new_text: "b" })), "no such file or directory: missing.txt");
});

test("run_command runs in the workspace with a clean environment and reports exit codes", async () => {
  process.env.CHATD_TEST_SECRET_FOR_EXEC = "leak-me";
  try {
    const output = await command("pwd; echo \"[$CHATD_TEST_SECRET_FOR_EXEC][$DATABASE_URL]\"; cat a.txt; echo oops >&2");
    assert.equal(output, { result: { exit_code: 0, stdout: `${join(root, "ws")}\n[][]\none two two\n`, stderr: "oops\n" }, isError: false });
  } finally {
    delete process.env.CHATD_TEST_SECRET_FOR_EXEC;
  }
  assert.equal(await command("exit 3"), { result: { exit_code: 3, stdout: "", stderr: "" }, isError: true });
  assert.is(errorOf(await command("   ")), "command must be a non-empty string");
});

test("run_command: a timeout kills the whole process group; output is capped per stream", async () => {
  const timedOut = await command("sleep 30 & echo $! > bg.pid; echo started; wait");
  const result = timedOut.result as { timed_out: string; stdout: string };
  assert.is(timedOut.isError, true);
  assert.is(result.timed_out, "the command was killed after 400 ms");
  assert.is(result.stdout, "started\n");
  const pid = Number(await readFile(join(root, "ws", "bg.pid"), "utf8"));
  // The background child was in the killed group: it is gone once init has reaped it.
  await waitFor("the background process to end with its group", async () => !processAlive(pid), 5_000);
  const big = await command("head -c 10000 /dev/zero | tr '\\0' a; head -c 3000 /dev/zero | tr '\\0' b >&2");
  const capped = big.result as Record<string, string>;
  assert.is(capped.stdout, "a".repeat(2048));
  assert.is(capped.stdout_truncated, "kept 2048 of 10000 bytes");
  assert.is(capped.stderr, "b".repeat(2048));
  assert.is(capped.stderr_truncated, "kept 2048 of 3000 bytes");
  // A command that exits while a background child holds its pipes still returns (the group is ended).
  assert.equal((await command("sleep 30 & echo done")).result, { exit_code: 0, stdout: "done\n", stderr: "" });
});

test("deployment from the environment: off unless set, bad values refused", () => {
  assert.equal(toolDeploymentFromEnv({}), READ_ONLY_DEPLOYMENT);
  assert.equal(toolDeploymentFromEnv({ CHATD_ENABLE_WRITE_TOOLS: "1", CHATD_ENABLE_EXEC_TOOLS: "true",
    CHATD_EXEC_TIMEOUT_MS: "5000", CHATD_EXEC_OUTPUT_CAP_BYTES: "4096" }),
  { writeTools: true, execTools: true, execTimeoutMs: 5000, execOutputCapBytes: 4096, resultCapBytes: 65536 });
  assert.throws(() => toolDeploymentFromEnv({ CHATD_ENABLE_EXEC_TOOLS: "maybe" }), /CHATD_ENABLE_EXEC_TOOLS/);
  assert.throws(() => toolDeploymentFromEnv({ CHATD_EXEC_OUTPUT_CAP_BYTES: "1000000" }), /CHATD_EXEC_OUTPUT_CAP_BYTES/);
});

test("endsTurnAfter: only a successful stop-after answer to the latest step ends the turn", () => {
  const tools = toolsForChat({ workspace: null, dynamicTools: [], planMode: true }).byName;
  const call = { role: "assistant" as const, content: [{ type: "tool-call" as const, tool_call_id: "c1", tool_name: "propose_plan", args: "{}" }] };
  const answer = (isError: boolean) => ({ role: "tool" as const, content: [{ type: "tool-result" as const, tool_call_id: "c1",
    tool_name: "propose_plan", result: "ok", is_error: isError }] });
  assert.ok(endsTurnAfter([call, answer(false)], tools));
  assert.not.ok(endsTurnAfter([call, answer(true)], tools));
  assert.not.ok(endsTurnAfter([call, answer(false), { role: "user", content: [{ type: "text", text: "next" }] }], tools));
  assert.not.ok(endsTurnAfter([call, answer(false)], toolsForChat({ workspace: null, dynamicTools: [] }).byName));
});

test.run();
