// Workspace tools: confinement (.., absolute paths, symbolic links out of the workspace), output caps,
// timeouts and argument parsing. No database; a temporary folder per run.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  capOutput, executeTool, parseToolArgs, DEFAULT_TOOL_RESULT_CAP_BYTES, toolsForChat, workspaceTools, type ToolDefinition, type ToolOutput,
} from "../../src/tools/index.ts";
import { tempFolder } from "../support/temp.ts";

let root: string;
const tool = (name: string) => workspaceTools.find((t) => t.name === name)!;
const run = (name: string, args: object | string, workspace: string | null = "ws", timeoutMs?: number): Promise<ToolOutput> =>
  executeTool(tool(name), typeof args === "string" ? args : JSON.stringify(args), {
    workspacesRoot: root, workspace, signal: new AbortController().signal, ...(timeoutMs != null ? { timeoutMs } : {}),
  });
const errorOf = (output: ToolOutput) => (output.isError ? (output.result as { error: string }).error : undefined);

test.before(async () => {
  root = await tempFolder("chatd-tools-");
  await mkdir(join(root, "ws", "sub"), { recursive: true });
  await writeFile(join(root, "ws", "a.txt"), "hello\nneedle here\n");
  await writeFile(join(root, "ws", "sub", "b.txt"), "another needle\n");
  await writeFile(join(root, "ws", "big.txt"), "x".repeat(DEFAULT_TOOL_RESULT_CAP_BYTES + 1000));
  await writeFile(join(root, "ws", "bin.dat"), Buffer.from([1, 0, 2]));
  await writeFile(join(root, "secret.txt"), "needle outside the workspace: SECRET\n");
  await mkdir(join(root, "ws2"));
  await writeFile(join(root, "ws2", "other.txt"), "needle in a sibling workspace: SECRET\n");
  await symlink(join(root, "secret.txt"), join(root, "ws", "link-out.txt"));
  await symlink(join(root, "ws2"), join(root, "ws", "dir-out"));
  await symlink(join(root, "ws", "a.txt"), join(root, "ws", "link-in.txt"));
});

test("read_file reads inside the workspace, also through an inside link", async () => {
  assert.equal(await run("read_file", { path: "a.txt" }), { result: "hello\nneedle here\n", isError: false });
  assert.equal(await run("read_file", { path: "sub/../a.txt" }), { result: "hello\nneedle here\n", isError: false });
  assert.equal(await run("read_file", { path: "link-in.txt" }), { result: "hello\nneedle here\n", isError: false });
});

test("path traversal, absolute paths and symlink escapes are refused", async () => {
  assert.is(errorOf(await run("read_file", { path: "../secret.txt" })), "path escapes the workspace");
  assert.is(errorOf(await run("read_file", { path: "sub/../../ws2/other.txt" })), "path escapes the workspace");
  assert.is(errorOf(await run("read_file", { path: join(root, "secret.txt") })),
    "path must be relative to the workspace (absolute paths are refused)");
  assert.is(errorOf(await run("read_file", { path: "/etc/passwd" })), "path must be relative to the workspace (absolute paths are refused)");
  assert.is(errorOf(await run("read_file", { path: "link-out.txt" })), "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await run("list_files", { path: "dir-out" })), "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await run("read_file", { path: "dir-out/other.txt" })), "path escapes the workspace (through a symbolic link)");
  assert.is(errorOf(await run("list_files", { path: ".." })), "path escapes the workspace");
  assert.is(errorOf(await run("read_file", { path: "a.txt\u0000" })), "path must not contain NUL characters");
});

test("list_files shows links without following them; search_files never leaves the workspace", async () => {
  const listed = (await run("list_files", { path: ".", recursive: true })).result as { entries: { path: string; type: string }[] };
  assert.equal(listed.entries.map((e) => `${e.path}:${e.type}`), [
    "a.txt:file", "big.txt:file", "bin.dat:file", "dir-out:symlink", "link-in.txt:symlink", "link-out.txt:symlink", "sub:dir",
    "sub/b.txt:file",
  ]);
  const found = await run("search_files", { query: "NEEDLE" });
  assert.is(found.isError, false);
  const text = JSON.stringify(found.result);
  assert.not.ok(text.includes("SECRET"), "nothing outside the workspace was searched");
  assert.equal((found.result as { matches: { path: string; line: number }[] }).matches.map((m) => `${m.path}:${m.line}`),
    ["a.txt:2", "sub/b.txt:1"]);
  assert.is(errorOf(await run("search_files", { query: "needle", path: "../ws2" })), "path escapes the workspace");
});

test("output caps: a large file is cut with a note; binary files are refused; large results are capped", async () => {
  const big = await run("read_file", { path: "big.txt" });
  assert.is(big.isError, false);
  const text = big.result as string;
  assert.ok(text.startsWith("x".repeat(1000)));
  assert.ok(text.endsWith(`[truncated: showing the first ${DEFAULT_TOOL_RESULT_CAP_BYTES} of ${DEFAULT_TOOL_RESULT_CAP_BYTES + 1000} bytes]`));
  assert.ok(Buffer.byteLength(text) < DEFAULT_TOOL_RESULT_CAP_BYTES + 200);
  assert.is(errorOf(await run("read_file", { path: "bin.dat" })), "bin.dat looks like a binary file");
  const capped = capOutput({ result: { items: "é".repeat(50_000) }, isError: false }, 1000);
  assert.type(capped.result, "string");
  assert.ok(Buffer.byteLength(capped.result as string) < 1100);
  assert.match(capped.result as string, /\[truncated: the tool output had \d+ bytes; showing the first 1000\]$/);
  assert.not.ok((capped.result as string).includes("\uFFFD"), "no character is split");
});

test("arguments: invalid JSON and non-objects are tool errors; empty text means no arguments", async () => {
  assert.equal(parseToolArgs(""), { ok: true, value: {} });
  assert.equal(parseToolArgs('{"path":'), { ok: false, error: "the tool arguments are not valid JSON" });
  assert.equal(parseToolArgs("[1]"), { ok: false, error: "the tool arguments must be a JSON object" });
  assert.is(errorOf(await run("read_file", '{"path": ')), "the tool arguments are not valid JSON");
  assert.is(errorOf(await run("read_file", { path: 7 })), "path must be a string");
  assert.is(errorOf(await run("read_file", { path: "missing.txt" })), "no such file or directory: missing.txt");
});

test("no workspace: no workspace tools are offered and none runs; a missing folder is an error", async () => {
  const offered = toolsForChat({ workspace: null, dynamicTools: [{ name: "lookup" }, { name: "coder_structured_output" }] });
  assert.equal(offered.specs.map((s) => s.name), ["lookup"], "the reserved finalizer name is never offered");
  assert.is(errorOf(await run("read_file", { path: "a.txt" }, null)), "this chat has no workspace");
  assert.is(errorOf(await run("read_file", { path: "a.txt" }, "absent")), "the chat's workspace folder does not exist");
  assert.equal(toolsForChat({ workspace: "ws", dynamicTools: [] }).specs.map((s) => s.name), ["list_files", "read_file", "search_files"]);
});

test("timeout: a tool that never answers is stopped with an error result", async () => {
  const hanging: ToolDefinition = { name: "hang", description: "", kind: "workspace", inputSchema: { type: "object" },
    execute: () => new Promise(() => {}) };
  const output = await executeTool(hanging, "{}", { workspacesRoot: root, workspace: "ws", signal: new AbortController().signal, timeoutMs: 30 });
  assert.equal(output, { result: { error: "the tool timed out after 30 ms" }, isError: true });
  const controller = new AbortController();
  const pending = executeTool(hanging, "{}", { workspacesRoot: root, workspace: "ws", signal: controller.signal });
  controller.abort();
  assert.equal(await pending, { result: { error: "the tool was cancelled" }, isError: true });
});

test.run();
