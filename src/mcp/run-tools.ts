// The tools a run opens for its chat beyond the registry's static ones: subagent tools (root chats only: depth 1)
// and the chat's MCP servers. Opened once when a run starts, so the tool list is fixed for the turn, and closed
// when the run ends.
import type pg from "pg";
import type { Logger } from "../log.ts";
import { subagentTools, type SubagentContext } from "../tools/subagents.ts";
import type { ToolDefinition } from "../tools/types.ts";
import { loadMcpServers } from "./config.ts";
import { openMcpTools } from "./tools.ts";

export interface RunToolsContext extends SubagentContext {
  pool: pg.Pool;
  log: Logger;
}

export interface RunTools {
  tools: ToolDefinition[];
  close(): Promise<void>;
}

export async function openRunTools(ctx: RunToolsContext): Promise<RunTools> {
  const { rows } = await ctx.pool.query<{ parent_chat_id: string | null; mcp_server_ids: string[] }>(
    "select parent_chat_id, mcp_server_ids from chat_public.chats where id = $1", [ctx.chatId]);
  const chat = rows[0];
  if (chat == null) return { tools: [], close: async () => undefined };
  const mcp = await openMcpTools(await loadMcpServers(ctx.pool, chat.mcp_server_ids), ctx.log);
  const agents = chat.parent_chat_id == null ? subagentTools(ctx) : [];
  return { tools: [...agents, ...mcp.tools], close: () => mcp.close() };
}
