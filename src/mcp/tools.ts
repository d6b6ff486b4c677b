// MCP servers as tools of one run, through the official TypeScript SDK: a run connects to each of its
// chat's servers once, lists their tools once, offers them as `mcp__<server>__<tool>`, and when it ends either
// closes the connections or parks them for the chat's next run (connection-cache.ts), which lists the tools again.
// A run spans one turn, so the tool list a model sees never changes within a turn. Every failure (connect, list,
// call, timeout, a server that dies mid-call) becomes a tool error result or a missing tool, never an exception out
// of the loop.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import type { JSONObject, JSONValue } from "../providers/index.ts";
import { capOutput, RESERVED_TOOL_NAMES } from "../tools/registry.ts";
import type { ToolDefinition, ToolOutput } from "../tools/types.ts";
import { mcpToolName, type McpServerConfig } from "./config.ts";
import { parkingKey, type McpConnectionCache } from "./connection-cache.ts";

/** Per server: bounds what one misbehaving server can add to a prompt. */
const MAX_TOOLS_PER_SERVER = 128;
const MAX_LIST_PAGES = 8;
const DESCRIPTION_CAP = 1024;
/** Starting a stdio server (a process) or the HTTP handshake may take longer than a short call timeout. */
const MIN_CONNECT_TIMEOUT_MS = 10_000;
/** Characters of a server's own error message shown to the model. */
const ERROR_TEXT_CAP = 500;

export interface McpTools {
  tools: ToolDefinition[];
  /** Servers that could not be reached or listed (logged; their tools are simply absent this run). */
  failed: string[];
  /** Ends the run's use of its connections: parked when opened with a cache, else closed. */
  close(): Promise<void>;
}

/** Where a run's connections go when it ends: parked for the same chat's next run. */
export interface McpParking {
  cache: McpConnectionCache;
  chatId: string;
}

interface Connected {
  client: Client;
  tools: ToolDefinition[];
}

const CLIENT_INFO = { name: "chatd", version: "1" };

function transportFor(server: McpServerConfig): Transport {
  if (server.transport === "stdio") {
    return new StdioClientTransport({
      command: server.command ?? "",
      args: server.args,
      // The SDK's safe default environment (PATH, HOME...) plus the server's own secrets; never the worker's full
      // environment, which holds provider keys and the database URL.
      env: { ...getDefaultEnvironment(), ...server.env },
      stderr: "ignore",
    });
  }
  return new StreamableHTTPClientTransport(new URL(server.url ?? ""), { requestInit: { headers: server.headers } });
}

/** A message safe and useful for the model: what failed, never a stack or a credential. */
export function describeFailure(serverId: string, error: unknown, timeoutMs: number): string {
  if (error instanceof McpError) {
    if (error.code === (ErrorCode.RequestTimeout as number)) return `MCP server ${serverId} timed out after ${timeoutMs} ms`;
    if (error.code === (ErrorCode.ConnectionClosed as number)) return `MCP server ${serverId} closed the connection (it may have exited)`;
    return `MCP server ${serverId} returned an error: ${error.message.slice(0, ERROR_TEXT_CAP)}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/not connected/i.test(message)) return `MCP server ${serverId} is no longer connected (it may have exited)`;
  return `MCP server ${serverId} failed: ${message.slice(0, ERROR_TEXT_CAP)}`;
}

/** MCP content blocks → one text for the model (images and audio are described, not inlined). */
function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts: string[] = [];
  for (const block of Array.isArray(result.content) ? result.content as Record<string, unknown>[] : []) {
    if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
    else if (block.type === "resource" && block.resource != null && typeof (block.resource as { text?: unknown }).text === "string") {
      parts.push((block.resource as { text: string }).text);
    } else if (block.type === "resource_link") parts.push(`[resource: ${String(block.uri)}]`);
    else parts.push(`[${String(block.type)} content: ${String(block.mimeType ?? "unknown type")}]`);
  }
  if (parts.length === 0 && result.structuredContent != null) return JSON.stringify(result.structuredContent);
  return parts.join("\n");
}

async function listTools(client: Client, server: McpServerConfig, timeout: number): Promise<ToolDefinition[]> {
  const listed: { name: string; description?: string; inputSchema: unknown }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES && listed.length < MAX_TOOLS_PER_SERVER; page++) {
    const answer = await client.listTools(cursor != null ? { cursor } : undefined, { timeout });
    listed.push(...answer.tools);
    cursor = answer.nextCursor;
    if (cursor == null) break;
  }
  const tools: ToolDefinition[] = [];
  for (const tool of listed.slice(0, MAX_TOOLS_PER_SERVER)) {
    const name = mcpToolName(server.id, tool.name);
    // Names that providers would refuse are skipped rather than renamed: a renamed tool could not be called back.
    if (name == null || RESERVED_TOOL_NAMES.has(name)) continue;
    tools.push({
      name,
      description: `[MCP server ${server.id}] ${tool.description ?? ""}`.slice(0, DESCRIPTION_CAP),
      inputSchema: (tool.inputSchema ?? { type: "object" }) as JSONObject,
      kind: "internal",
      // The registry's timer is a backstop; the SDK's request timeout answers first with a clearer message.
      timeoutMs: server.timeoutMs + 1000,
      execute: (args, ctx) => callTool(client, server, tool.name, args, ctx.signal),
    });
  }
  return tools;
}

async function connect(server: McpServerConfig): Promise<Connected> {
  const client = new Client(CLIENT_INFO);
  const setupTimeout = Math.max(server.timeoutMs, MIN_CONNECT_TIMEOUT_MS);
  try {
    await client.connect(transportFor(server), { timeout: setupTimeout });
    return { client, tools: await listTools(client, server, setupTimeout) };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/** A parked connection is only kept if it still answers: its process may have died or its HTTP session expired
 * since the last run, which the model should never notice. */
async function reuseOrConnect(server: McpServerConfig, parked: Client | undefined, log: Logger): Promise<Connected> {
  if (parked != null) {
    try {
      // Already started, so the server's own call timeout applies, not the longer start-up allowance.
      return { client: parked, tools: await listTools(parked, server, server.timeoutMs) };
    } catch (error) {
      log.info({ mcp_server: server.id, error: describeFailure(server.id, error, server.timeoutMs) },
        "parked MCP connection did not answer; connecting anew");
      await parked.close().catch(() => undefined);
    }
  }
  return connect(server);
}

async function callTool(client: Client, server: McpServerConfig, name: string, args: JSONObject,
  signal: AbortSignal): Promise<ToolOutput> {
  try {
    // The SDK's result type also covers the pre-2024 `toolResult` shape; only content blocks are read here.
    const result = await client.callTool({ name, arguments: args }, undefined, { signal, timeout: server.timeoutMs }) as
      { content?: unknown; structuredContent?: unknown; isError?: unknown };
    const output: ToolOutput = { result: resultText(result) as JSONValue, isError: result.isError === true };
    return capOutput(output, server.outputCapBytes);
  } catch (error) {
    return { result: { error: describeFailure(server.id, error, server.timeoutMs) }, isError: true };
  }
}

/** Connects to the servers in parallel, reusing the chat's parked connections; a server that fails is logged and
 * left out. */
export async function openMcpTools(servers: McpServerConfig[], log: Logger, parking?: McpParking): Promise<McpTools> {
  const settled = await Promise.allSettled(servers.map((server) =>
    reuseOrConnect(server, parking?.cache.take(parkingKey(parking.chatId, server)), log)));
  const connected: { client: Client; server: McpServerConfig }[] = [];
  const tools: ToolDefinition[] = [];
  const failed: string[] = [];
  settled.forEach((outcome, index) => {
    const server = servers[index]!;
    if (outcome.status === "fulfilled") {
      connected.push({ client: outcome.value.client, server });
      tools.push(...outcome.value.tools);
    } else {
      failed.push(server.id);
      log.warn({ mcp_server: server.id, error: describeFailure(server.id, outcome.reason, server.timeoutMs) },
        "MCP server unavailable; its tools are not offered this run");
    }
  });
  return {
    tools,
    failed,
    async close() {
      if (parking != null) {
        for (const { client, server } of connected) parking.cache.park(parkingKey(parking.chatId, server), client);
        return;
      }
      await Promise.all(connected.map(({ client }) => client.close().catch(() => undefined)));
    },
  };
}
