// Operator configuration of MCP servers (chat_private.mcp_servers, secrets in mcp_server_secrets) and the naming
// rule for their tools. A chat selects servers by id (chats.mcp_server_ids); disabled or deleted servers are
// skipped at run time as if unselected.
import type pg from "pg";

export interface McpServerConfig {
  id: string;
  transport: "stdio" | "http";
  command: string | null;
  args: string[];
  url: string | null;
  timeoutMs: number;
  outputCapBytes: number;
  env: Record<string, string>;
  headers: Record<string, string>;
}

/** Enabled servers among `ids`, in the chat's order. */
export async function loadMcpServers(pool: pg.Pool, ids: readonly string[]): Promise<McpServerConfig[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: string; transport: "stdio" | "http"; command: string | null; args: unknown;
    url: string | null; timeout_ms: number; output_cap_bytes: number; env: unknown; headers: unknown }>(
    `select s.id, s.transport, s.command, s.args, s.url, s.timeout_ms, s.output_cap_bytes, x.env, x.headers
     from unnest($1::text[]) with ordinality i(id, ord)
     join chat_private.mcp_servers s on s.id = i.id and s.enabled
     left join chat_private.mcp_server_secrets x on x.server_id = s.id
     order by i.ord`, [ids]);
  return rows.map((r) => ({
    id: r.id, transport: r.transport, command: r.command, url: r.url, timeoutMs: r.timeout_ms,
    outputCapBytes: r.output_cap_bytes,
    args: Array.isArray(r.args) ? r.args.map(String) : [],
    env: stringRecord(r.env),
    headers: stringRecord(r.headers),
  }));
}

function stringRecord(value: unknown): Record<string, string> {
  if (value == null || typeof value !== "object" || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

/** Provider tool names: at most 64 characters of [A-Za-z0-9_-] (the strictest of OpenAI and Anthropic). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `mcp__<server>__<tool>`, or null when the combination is not a valid provider tool name. The server id has no
 * double underscore (a CHECK on mcp_servers), so the name splits back unambiguously. */
export function mcpToolName(serverId: string, toolName: string): string | null {
  const name = `mcp__${serverId}__${toolName}`;
  return TOOL_NAME.test(name) ? name : null;
}
