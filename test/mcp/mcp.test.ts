// MCP servers through the official SDK against the test server of test/support/mcp-server.ts (stdio and streamable
// HTTP on 127.0.0.1): namespacing, a round trip, error results, timeouts, output caps, a server that dies mid-call;
// then the same through the worker loop (scripted provider, deterministic, not a real model) and the SQL side.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, sendMessage } from "../support/chats.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { MCP_SERVER_PATH, startHttpMcpServer } from "../support/mcp-server.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, messages, startTestWorker, testLogger, waitFor, waitForStatus } from "../support/worker.ts";
import type { McpServerConfig } from "../../src/mcp/config.ts";
import { mcpToolName } from "../../src/mcp/config.ts";
import { openMcpTools, type McpTools } from "../../src/mcp/tools.ts";
import { executeTool } from "../../src/tools/index.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  user = await createUser(db, "mcp-user");
});
test.after(async () => {
  await db.drop();
});

const stdio = (overrides: Partial<McpServerConfig> = {}): McpServerConfig => ({
  id: "local", transport: "stdio", command: process.execPath, args: [MCP_SERVER_PATH], url: null, timeoutMs: 10_000,
  outputCapBytes: 4096, env: {}, headers: {}, ...overrides,
});

async function run(opened: McpTools, name: string, args: object = {}) {
  const tool = opened.tools.find((t) => t.name === name);
  assert.ok(tool, `tool ${name} offered`);
  return executeTool(tool, JSON.stringify(args), { workspacesRoot: "/nonexistent", workspace: null, signal: new AbortController().signal });
}

test("tool names: mcp__<server>__<tool>, only when a provider would accept them", () => {
  assert.is(mcpToolName("local", "echo"), "mcp__local__echo");
  assert.is(mcpToolName("local", "bad.name"), null);
  assert.is(mcpToolName("local", "x".repeat(60)), null);
});

test("stdio: tools listed once and namespaced; round trip, error result, output cap, timeout, death mid-call", async () => {
  const opened = await openMcpTools([stdio()], testLogger);
  try {
    assert.equal(opened.failed, []);
    assert.equal(opened.tools.map((t) => t.name), ["mcp__local__echo", "mcp__local__fail", "mcp__local__big", "mcp__local__hang", "mcp__local__die"]);
    assert.equal(await run(opened, "mcp__local__echo", { text: "hi" }), { result: "echo: hi", isError: false });
    assert.equal(await run(opened, "mcp__local__fail"), { result: "the lookup failed", isError: true });
    const big = await run(opened, "mcp__local__big");
    assert.match(String(big.result), /\[truncated: the tool output had 200000 bytes; showing the first 4096\]$/);
    const died = await run(opened, "mcp__local__die");
    assert.equal(died, { result: { error: "MCP server local closed the connection (it may have exited)" }, isError: true });
    const after = await run(opened, "mcp__local__echo", { text: "still there?" });
    assert.is(after.isError, true);
    assert.match(JSON.stringify(after.result), /MCP server local/);
  } finally {
    await opened.close();
  }
  const slow = await openMcpTools([stdio({ timeoutMs: 300 })], testLogger);
  try {
    assert.equal(await run(slow, "mcp__local__hang"), { result: { error: "MCP server local timed out after 300 ms" }, isError: true });
  } finally {
    await slow.close();
  }
});

test("streamable HTTP: round trip, and a connection destroyed mid-call is a tool error", async () => {
  const http = await startHttpMcpServer();
  const opened = await openMcpTools([{ ...stdio(), id: "web", transport: "http", command: null, args: [], url: http.url }], testLogger);
  try {
    assert.equal(await run(opened, "mcp__web__echo", { text: "over http" }), { result: "echo: over http", isError: false });
    const died = await run(opened, "mcp__web__die");
    assert.is(died.isError, true);
    assert.match(JSON.stringify(died.result), /MCP server web/);
  } finally {
    await opened.close();
    await http.close();
  }
});

test("servers that cannot start or be reached are left out, not thrown", async () => {
  const opened = await openMcpTools([
    stdio({ id: "missing", command: "/nonexistent/mcp-server" }),
    { ...stdio(), id: "down", transport: "http", command: null, args: [], url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 },
    stdio(),
  ], testLogger);
  try {
    assert.equal(opened.failed.sort(), ["down", "missing"]);
    assert.ok(opened.tools.some((t) => t.name === "mcp__local__echo"));
  } finally {
    await opened.close();
  }
});

test("set_chat_mcp_servers: known enabled ids only; operators read servers but never their secrets", async () => {
  await db.pool.query(`insert into chat_private.mcp_servers (id, transport, command, args) values ('local', 'stdio', $1, $2)
    on conflict (id) do nothing`, [process.execPath, JSON.stringify([MCP_SERVER_PATH])]);
  await db.pool.query(`insert into chat_private.mcp_servers (id, transport, url, enabled) values ('off', 'http', 'http://127.0.0.1:9/', false)`);
  await db.pool.query(`insert into chat_private.mcp_server_secrets (server_id, env) values ('local', '{"TOKEN": "s3cret"}')`);
  const chat = await createWorkerChat(db, user, "hello", { workspace: null });
  const set = (ids: string[]) => asUser(db, user, (c) => c.query("select chat_public.set_chat_mcp_servers($1, $2)", [chat, ids]));
  assert.is(await sqlState(set(["nope"])), "CIINV");
  assert.is(await sqlState(set(["off"])), "CIINV");
  assert.is(await sqlState(set(["local", "local"])), "CIINV");
  await set(["local"]);
  const { rows } = await db.pool.query("select mcp_server_ids from chat_public.chats where id = $1", [chat]);
  assert.equal(rows[0].mcp_server_ids, ["local"]);
  const servers = await db.as("chat_operator", null, (c) => c.query("select id from chat_private.mcp_servers order by id"));
  assert.equal(servers.rows.map((r: { id: string }) => r.id), ["local", "off"]);
  assert.is(await sqlState(db.as("chat_operator", null, (c) => c.query("select * from chat_private.mcp_server_secrets"))), "42501");
  assert.is(await sqlState(db.as("chat_user", user, (c) => c.query("select * from chat_private.mcp_servers"))), "42501");
});

test("through the worker loop: an MCP round trip, then the server dies mid-call and the turn still finishes", async () => {
  const worker = await startTestWorker(db, await makeWorkspaces());
  try {
    const chat = await createWorkerChat(db, user, "no tools yet", { workspace: null });
    await waitForStatus(db, chat, "waiting");
    await asUser(db, user, (c) => c.query("select chat_public.set_chat_mcp_servers($1, $2)", [chat, ["local"]]));
    await sendMessage(db, user, chat, JSON.stringify({ script: [
      { tool_calls: [{ name: "mcp__local__echo", args: { text: "ping" } }] },
      { tool_calls: [{ name: "mcp__local__die", args: {} }] },
      { text: "the server went away" },
    ] }));
    await waitFor("the turn to finish", async () => (await messages(db, chat)).some((r) => r.content.some((p) => p.text === "the server went away")));
    await waitForStatus(db, chat, "waiting");
    const results = (await messages(db, chat)).flatMap((r) => r.content).filter((p) => p.type === "tool-result");
    assert.equal(results.map((p) => [p.tool_name, p.is_error, p.result]), [
      ["mcp__local__echo", false, "echo: ping"],
      ["mcp__local__die", true, { error: "MCP server local closed the connection (it may have exited)" }],
    ]);
  } finally {
    await worker.stop();
  }
});

test.run();
