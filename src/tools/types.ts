// The tool vocabulary shared by the worker loop and the tool implementations.
import type { JSONObject, JSONValue } from "../providers/index.ts";

/**
 * workspace: executed by the worker inside the chat's workspace folder.
 * dynamic: declared by the client; never executed here, the chat pauses for the client's result.
 * internal: executed by the worker without a workspace (plan mode's `propose_plan`).
 */
export type ToolKind = "workspace" | "dynamic" | "internal";

export interface ToolContext {
  /** Realpath of the chat's workspace folder (workspace tools only). */
  workspaceRoot: string;
  /** Aborted on timeout, interrupt, lost lease or shutdown. */
  signal: AbortSignal;
  /** The provider's id of the call (subagents key a spawn on it, so a re-run after a crash finds the same child). */
  toolCallId?: string;
  /** The most of its output a result may keep (CHATD_TOOL_RESULT_CAP_BYTES); a tool that cuts its own output
   * (read_file) cuts it here. */
  resultCapBytes: number;
}

export interface ToolOutput {
  result: JSONValue;
  isError: boolean;
  /** The tool kept at most the result cap of its output and said so in the result (a note after the text), so
   * the registry does not cut it again. */
  capped?: boolean;
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JSONObject;
  kind: ToolKind;
  /** Defaults to the registry's timeout. */
  timeoutMs?: number;
  /** Local tools only. `args` is parsed JSON (an object). */
  execute?: (args: JSONObject, ctx: ToolContext) => Promise<ToolOutput>;
  /** Offered and run in plan mode: read-only tools, declared-safe dynamic tools, `propose_plan`.
   * Anything without it is withheld in plan mode and refused if a call to it arrives anyway. */
  planSafe?: boolean;
  /** A successful call ends the turn after its batch's results are committed (`propose_plan`). */
  endsTurn?: boolean;
  /** Running the call again has no effect beyond its result (the read-only workspace tools), so the worker may
   * commit the result with the next step (worker/loop/results.ts) and a runner that dies first lets the call run again. */
  rerunnable?: boolean;
}

/** What the deployment allows beyond the read-only workspace tools (off by default; worker environment). */
export interface ToolDeployment {
  /** `write_file` and `edit_file` (CHATD_ENABLE_WRITE_TOOLS=1). */
  writeTools: boolean;
  /** `run_command` (CHATD_ENABLE_EXEC_TOOLS=1). */
  execTools: boolean;
  /** Wall-clock limit of one command; its process group is killed when it passes. */
  execTimeoutMs: number;
  /** Bytes kept of each of stdout and stderr. */
  execOutputCapBytes: number;
  /** The most of one tool's output that goes into the transcript and the next prompt (CHATD_TOOL_RESULT_CAP_BYTES):
   * the rest is cut and a note says so. Every local tool and every MCP tool. */
  resultCapBytes: number;
}

/** A tool failure whose message is safe to show the model (no host paths outside the workspace). */
export class ToolError extends Error {
  override name = "ToolError";
}
