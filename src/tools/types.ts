// The tool vocabulary shared by the worker loop and the tool implementations.
import type { JSONObject, JSONValue } from "../providers/index.ts";

/**
 * workspace: executed by the worker inside the chat's workspace folder.
 * dynamic: declared by the client; never executed here, the chat pauses for the client's result.
 */
export type ToolKind = "workspace" | "dynamic";

export interface ToolContext {
  /** Realpath of the chat's workspace folder (workspace tools only). */
  workspaceRoot: string;
  /** Aborted on timeout, interrupt, lost lease or shutdown. */
  signal: AbortSignal;
}

export interface ToolOutput {
  result: JSONValue;
  isError: boolean;
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
}

/** A tool failure whose message is safe to show the model (no host paths outside the workspace). */
export class ToolError extends Error {
  override name = "ToolError";
}
