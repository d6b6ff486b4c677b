// MCP servers through the official SDK against the test server of test/support/mcp-server.ts (stdio and streamable
// HTTP on 127.0.0.1): namespacing, a round trip, error results, timeouts, output caps, a server that dies mid-call;
// connections parked between a chat's runs (reuse, isolation, config changes, dead servers, TTL and size bounds);
// then the same through the worker loop (scripted provider, deterministic, not a real model) and the SQL side.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, sendMessage } from "../support/chats.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { MCP_SERVER_PATH, startHttpMcpServer } from "../support/mcp-server.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, messages, startTestWorker, testLogger, waitFor, waitForStatus } from "../support/worker.ts";
import type { McpServerConfig } from "../../src/mcp/config.ts";
import { mcpToolName } from "../../src/mcp/config.ts";
import { McpConnectionCache } from "../../src/mcp/connection-cache.ts";
import { openMcpTools, type McpTools } from "../../src/mcp/tools.ts";
import { executeTool } from "../../src/tools/index.ts";
import { processAlive } from "../../src/process-alive.ts";

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

const alive = processAlive;

const exited = (pid: number) => waitFor(`process ${pid} to exit`, async () => !alive(pid));

async function serverPid(opened: McpTools): Promise<number> {
  const answer = await run(opened, "mcp__local__pid");
  assert.is(answer.isError, false);
  return Number(answer.result);
}

/** One run of `chatId` against the stdio server: opens it (reusing a parked connection), reads its pid, parks it. */
async function runOf(cache: McpConnectionCache, chatId: string, server = stdio()): Promise<number> {
  const opened = await openMcpTools([server], testLogger, { cache, chatId });
  try {
    assert.equal(opened.failed, []);
    return await serverPid(opened);
  } finally {
    await opened.close();
  }
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
    assert.equal(opened.tools.map((t) => t.name), ["mcp__local__echo", "mcp__local__fail", "mcp__local__big", "mcp__local__hang", "mcp__local__die",
      "mcp__local__pid", "mcp__local__stall"]);
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

test("parked: the chat's next run reuses its stdio server process; another chat or an overlapping run gets its own", async () => {
  const cache = new McpConnectionCache();
  try {
    const first = await runOf(cache, "chat-a");
    assert.is(cache.size, 1);
    assert.is(await runOf(cache, "chat-a"), first);
    const other = await runOf(cache, "chat-b");
    assert.is.not(other, first);
    const holding = await openMcpTools([stdio()], testLogger, { cache, chatId: "chat-a" });
    try {
      assert.is(await serverPid(holding), first);
      assert.is.not(await runOf(cache, "chat-a"), first, "a connection in use is never handed to a second run");
    } finally {
      await holding.close();
    }
  } finally {
    await cache.closeAll();
  }
});

test("parked: a changed server config (timeout, env) starts a fresh process", async () => {
  const cache = new McpConnectionCache();
  try {
    const first = await runOf(cache, "chat-a");
    const longerTimeout = await runOf(cache, "chat-a", stdio({ timeoutMs: 9000 }));
    const newSecret = await runOf(cache, "chat-a", stdio({ env: { TOKEN: "rotated" } }));
    assert.is(new Set([first, longerTimeout, newSecret]).size, 3);
  } finally {
    await cache.closeAll();
  }
});

test("parked: a server that died while parked leaves the cache and the next run connects anew", async () => {
  const cache = new McpConnectionCache();
  try {
    const dead = await runOf(cache, "chat-a");
    process.kill(dead, "SIGKILL");
    await exited(dead);
    await waitFor("the dead connection to leave the cache", async () => cache.size === 0);
    const opened = await openMcpTools([stdio()], testLogger, { cache, chatId: "chat-a" });
    try {
      assert.equal(opened.failed, []);
      assert.equal(await run(opened, "mcp__local__echo", { text: "back" }), { result: "echo: back", isError: false });
      assert.is.not(await serverPid(opened), dead);
    } finally {
      await opened.close();
    }
  } finally {
    await cache.closeAll();
  }
});

test("parked: a server that no longer answers its listing is closed and replaced, without a tool error", async () => {
  const cache = new McpConnectionCache();
  const server = stdio({ timeoutMs: 300 });
  try {
    const first = await openMcpTools([server], testLogger, { cache, chatId: "chat-a" });
    const stalled = await serverPid(first);
    assert.equal(await run(first, "mcp__local__stall"), { result: "stalled", isError: false });
    await first.close();
    const next = await openMcpTools([server], testLogger, { cache, chatId: "chat-a" });
    try {
      assert.equal(next.failed, []);
      assert.equal(await run(next, "mcp__local__echo", { text: "fresh" }), { result: "echo: fresh", isError: false });
      assert.is.not(await serverPid(next), stalled);
      await exited(stalled);
    } finally {
      await next.close();
    }
  } finally {
    await cache.closeAll();
  }
});

test("parked: closed after the idle TTL, and beyond the size bound the least recently parked is closed", async () => {
  const expiring = new McpConnectionCache(50);
  try {
    const pid = await runOf(expiring, "chat-a");
    await exited(pid);
    assert.is(expiring.size, 0);
  } finally {
    await expiring.closeAll();
  }
  const small = new McpConnectionCache(60_000, 1);
  try {
    const older = await runOf(small, "chat-a");
    const newer = await runOf(small, "chat-b");
    await exited(older);
    assert.is(small.size, 1);
    assert.ok(alive(newer));
    assert.is(await runOf(small, "chat-b"), newer);
  } finally {
    await small.closeAll();
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

test("through the worker loop: a chat's next turn reuses its stdio server, and stopping the worker ends it", async () => {
  const worker = await startTestWorker(db, await makeWorkspaces());
  let pid: number | undefined;
  try {
    const chat = await createWorkerChat(db, user, "no tools yet", { workspace: null });
    await waitForStatus(db, chat, "waiting");
    await asUser(db, user, (c) => c.query("select chat_public.set_chat_mcp_servers($1, $2)", [chat, ["local"]]));
    for (const done of ["first turn", "second turn"]) {
      await sendMessage(db, user, chat, JSON.stringify({ script: [{ tool_calls: [{ name: "mcp__local__pid", args: {} }] }, { text: done }] }));
      await waitFor(`the ${done} to finish`, async () => (await messages(db, chat)).some((r) => r.content.some((p) => p.text === done)));
      await waitForStatus(db, chat, "waiting");
    }
    const results = (await messages(db, chat)).flatMap((r) => r.content).filter((p) => p.type === "tool-result");
    const pids = results.map((p) => Number(p.result));
    assert.is(pids.length, 2);
    assert.is(pids[0], pids[1]);
    pid = pids[0]!;
    assert.ok(alive(pid));
  } finally {
    await worker.stop();
  }
  await exited(pid);
});

test.run();
