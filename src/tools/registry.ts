// The tools a chat is offered and how one call runs: argument parsing (raw JSON text from the provider),
// timeout, output cap. Workspace tools need the chat's workspace; dynamic tools are the chat's declared client
// tools and are never executed here.
import { FINALIZER_TOOL_NAME } from "../structured/finalizer.ts";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import type { JSONObject, ToolSpec } from "../providers/index.ts";
import { DEFAULT_TOOL_RESULT_CAP_BYTES, READ_ONLY_DEPLOYMENT } from "./deployment.ts";
import { execTools } from "./exec.ts";
import { proposePlanTool } from "./plan.ts";
import { ToolError, type ToolDefinition, type ToolDeployment, type ToolOutput } from "./types.ts";
import { workspaceTools } from "./workspace.ts";
import { writeTools } from "./write.ts";

export const DEFAULT_TIMEOUT_MS = 30_000;
/** The finalizer is added by the structured-output runtime, never offered as an ordinary tool. */
// The finalizer's name has one owner (src/structured/finalizer.ts); no other tool may take it.
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([FINALIZER_TOOL_NAME]);

export interface DynamicToolDeclaration {
  name: string;
  description?: string;
  input_schema?: JSONObject;
  /** The client declares the tool free of side effects: it stays offered in plan mode. */
  plan_safe?: boolean;
}

export interface ChatTools {
  specs: ToolSpec[];
  byName: Map<string, ToolDefinition>;
  /** Tools this chat knows but may not use now, with the reason the model gets if it calls one anyway. */
  withheld: Map<string, string>;
  /** Built for plan mode: pass it on to executeTool, which refuses any tool not declared plan-safe. */
  planMode: boolean;
  /** The deployment's cap on one result: pass it on to executeTool. */
  resultCapBytes: number;
}

/** The read-only workspace tools (list, read, search) are the ones plan mode keeps. */
const READ_TOOLS: ToolDefinition[] = workspaceTools.map((tool) => ({ ...tool, planSafe: true }));

/** Workspace tools when the chat has a workspace; then the run's own tools (subagents, MCP: see
 * src/mcp/run-tools.ts); then the client's dynamic tools (a dynamic name shadows the others: the client declared it
 * explicitly). */
export function toolsForChat(chat: { workspace: string | null; dynamicTools: DynamicToolDeclaration[]; planMode?: boolean },
  runTools: readonly ToolDefinition[] = [], deployment: ToolDeployment = READ_ONLY_DEPLOYMENT): ChatTools {
  const byName = new Map<string, ToolDefinition>();
  if (chat.workspace != null) {
    for (const tool of READ_TOOLS) byName.set(tool.name, tool);
    // Write and command tools only where the deployment enables them; plan mode drops them below.
    if (deployment.writeTools) for (const tool of writeTools) byName.set(tool.name, tool);
    if (deployment.execTools) for (const tool of execTools(deployment)) byName.set(tool.name, tool);
  }
  for (const tool of runTools) if (!RESERVED_TOOL_NAMES.has(tool.name)) byName.set(tool.name, tool);
  for (const declared of chat.dynamicTools) {
    if (RESERVED_TOOL_NAMES.has(declared.name)) continue;
    byName.set(declared.name, {
      name: declared.name,
      description: declared.description ?? "",
      inputSchema: declared.input_schema ?? { type: "object" },
      kind: "dynamic",
      ...(declared.plan_safe === true ? { planSafe: true } : {}),
    });
  }
  const withheld = new Map<string, string>();
  if (chat.planMode === true) {
    // Plan mode keeps only what is declared safe, whatever its source, and adds the tool that ends the turn.
    for (const tool of [...byName.values()]) {
      if (tool.planSafe === true) continue;
      byName.delete(tool.name);
      withheld.set(tool.name, `${tool.name} is not available in plan mode; finish exploring and call ${proposePlanTool.name}`);
    }
    byName.set(proposePlanTool.name, proposePlanTool);
  }
  const optional: [string, boolean][] = [["write_file", deployment.writeTools], ["edit_file", deployment.writeTools],
    ["run_command", deployment.execTools]];
  for (const [name, enabled] of optional) {
    if (!enabled && !byName.has(name) && !withheld.has(name)) withheld.set(name, `${name} is not enabled in this deployment`);
  }
  const specs: ToolSpec[] = [...byName.values()].map((tool) => ({
    name: tool.name,
    ...(tool.description !== "" ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
  }));
  return { specs, byName, withheld, planMode: chat.planMode === true, resultCapBytes: deployment.resultCapBytes };
}

/** The folder of a chat's workspace: `<root>/<name>` (the name was validated as a plain folder name in SQL). */
export function workspaceFolder(workspacesRoot: string, name: string): string {
  return join(workspacesRoot, name);
}

export type ParsedArgs = { ok: true; value: JSONObject } | { ok: false; error: string };

/** Provider argument text → an object. Never throws: bad text becomes a tool error for the model to fix. */
export function parseToolArgs(raw: string): ParsedArgs {
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, error: "the tool arguments are not valid JSON" };
  }
  if (value == null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: "the tool arguments must be a JSON object" };
  }
  return { ok: true, value: value as JSONObject };
}

function utf8Prefix(text: string, bytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= bytes) return text;
  // Decoding a cut buffer replaces a split character instead of failing; drop that replacement.
  return buffer.subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "");
}

/** Bounds what goes back into history and the next prompt: at most `capBytes` of the output (its text, or its
 * JSON), then a note that tells the model it saw a part only. */
export function capOutput(output: ToolOutput, capBytes = DEFAULT_TOOL_RESULT_CAP_BYTES): ToolOutput {
  if (output.capped === true) return output;
  const text = typeof output.result === "string" ? output.result : JSON.stringify(output.result);
  if (Buffer.byteLength(text, "utf8") <= capBytes) return output;
  const note = `\n[truncated: the tool output had ${Buffer.byteLength(text, "utf8")} bytes; showing the first ${capBytes}]`;
  return { result: utf8Prefix(text, capBytes) + note, isError: output.isError };
}

function errorOutput(message: string): ToolOutput {
  return { result: { error: message }, isError: true };
}

export interface ExecuteOptions {
  workspacesRoot: string;
  workspace: string | null;
  signal: AbortSignal;
  timeoutMs?: number;
  outputCapBytes?: number;
  toolCallId?: string;
  /** Refuse every tool not declared plan-safe, whichever tool set it came from. */
  planMode?: boolean;
}

/** Runs one local tool call. Tool failures (bad arguments, escapes, timeouts) are results, never exceptions. */
export async function executeTool(tool: ToolDefinition, rawArgs: string, options: ExecuteOptions): Promise<ToolOutput> {
  if (tool.execute == null) return errorOutput(`${tool.name} is not executed by the server`);
  if (options.planMode === true && tool.planSafe !== true) return errorOutput(`${tool.name} is not available in plan mode`);
  const parsed = parseToolArgs(rawArgs);
  if (!parsed.ok) return errorOutput(parsed.error);
  if (tool.kind === "workspace" && options.workspace == null) return errorOutput("this chat has no workspace");
  const timeoutMs = tool.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    let workspaceRoot = "";
    if (tool.kind === "workspace" && options.workspace != null) {
      try {
        // Resolved on every call (a swapped folder is seen), synchronously: see src/tools/paths.ts.
        workspaceRoot = realpathSync.native(workspaceFolder(options.workspacesRoot, options.workspace));
      } catch {
        return errorOutput("the chat's workspace folder does not exist");
      }
    }
    const stopped = new Promise<ToolOutput>((resolve) => {
      timer = setTimeout(() => {
        // Resolve first: the abort listener below would otherwise report a plain cancellation.
        resolve(errorOutput(`the tool timed out after ${timeoutMs} ms`));
        controller.abort();
      }, timeoutMs);
      if (controller.signal.aborted) resolve(errorOutput("the tool was cancelled"));
      controller.signal.addEventListener("abort", () => resolve(errorOutput("the tool was cancelled")), { once: true });
    });
    const resultCapBytes = options.outputCapBytes ?? DEFAULT_TOOL_RESULT_CAP_BYTES;
    const run = tool.execute(parsed.value, { workspaceRoot, signal: controller.signal, resultCapBytes,
      ...(options.toolCallId != null ? { toolCallId: options.toolCallId } : {}) });
    return capOutput(await Promise.race([run, stopped]), resultCapBytes);
  } catch (error) {
    if (error instanceof ToolError) return errorOutput(error.message);
    const code = (error as { code?: unknown }).code;
    // File-system errors are reported by code only: their messages carry absolute host paths.
    return errorOutput(typeof code === "string" ? `the tool failed (${code})` : "the tool failed");
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
}

