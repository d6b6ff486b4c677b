// The tools a run opens for its chat beyond the registry's static ones: subagent tools (root chats only: depth 1)
// and the chat's MCP servers. Opened once when a run starts, so the tool list is fixed for the turn, and closed
// when the run ends; MCP connections are parked instead, for the chat's next run in this process.
import type pg from "pg";
import type { Logger } from "../log.ts";
import { subagentTools, type SubagentContext } from "../tools/subagents.ts";
import type { ToolDefinition } from "../tools/types.ts";
import { loadMcpServers } from "./config.ts";
import { McpConnectionCache } from "./connection-cache.ts";
import { openMcpTools } from "./tools.ts";

export interface RunToolsContext extends SubagentContext {
  pool: pg.Pool;
  log: Logger;
  /** The chat's parent and MCP server ids when the caller has read them already (the worker's turn state). */
  chat?: { parentChatId: string | null; mcpServerIds: string[] };
}

export interface RunTools {
  tools: ToolDefinition[];
  close(): Promise<void>;
}

// Process-wide because a chat's consecutive runs are separate jobs that share nothing else in the process.
const parked = new McpConnectionCache();

/** Closes the connections parked by every run of this process (worker shutdown), so stdio servers exit with it. */
export function closeParkedMcpConnections(): Promise<void> {
  return parked.closeAll();
}

export async function openRunTools(ctx: RunToolsContext): Promise<RunTools> {
  const chat = ctx.chat ?? await readChat(ctx.pool, ctx.chatId);
  if (chat == null) return { tools: [], close: async () => undefined };
  const mcp = await openMcpTools(await loadMcpServers(ctx.pool, chat.mcpServerIds), ctx.log,
    { cache: parked, chatId: ctx.chatId });
  const agents = chat.parentChatId == null ? subagentTools(ctx) : [];
  return { tools: [...agents, ...mcp.tools], close: () => mcp.close() };
}

async function readChat(pool: pg.Pool, chatId: string): Promise<{ parentChatId: string | null; mcpServerIds: string[] } | undefined> {
  const { rows } = await pool.query<{ parent_chat_id: string | null; mcp_server_ids: string[] }>(
    "select parent_chat_id, mcp_server_ids from chat_public.chats where id = $1", [chatId]);
  const row = rows[0];
  return row == null ? undefined : { parentChatId: row.parent_chat_id, mcpServerIds: row.mcp_server_ids };
}
