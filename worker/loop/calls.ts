// One batch of a step's calls: local tools run here, one after another; client (dynamic) calls are collected for
// the pause. What becomes of the results (committed, or carried to the next commit) is results.ts.
import { executeTool, parseToolArgs, type ChatTools } from "../../src/tools/index.ts";
import { fault, type Faults } from "../faults.ts";
import type { PendingCall, StoredMessage } from "./types.ts";

export interface DynamicCall {
  tool_call_id: string;
  tool_name: string;
  args: unknown;
}

export interface BatchOutcome {
  /** tool-result parts of the calls that ran, in call order. */
  results: object[];
  dynamic: DynamicCall[];
}

export interface CallContext {
  faults: Faults;
  workspacesRoot: string;
  workspace: string | null;
  signal: AbortSignal;
  timeoutMs?: number;
  /** The run was told to stop: no further local call starts. */
  stopped: () => boolean;
  /** Told before each local call starts (the run's progress clock). */
  onCall?: () => void;
}

export async function runLocalCalls(calls: PendingCall[], tools: ChatTools, ctx: CallContext): Promise<BatchOutcome> {
  const dynamic: DynamicCall[] = [];
  const results: object[] = [];
  let faulted = false;
  for (const call of calls) {
    const tool = tools.byName.get(call.tool_name);
    const parsed = parseToolArgs(call.args);
    if (tool?.kind === "dynamic" && parsed.ok) {
      dynamic.push({ tool_call_id: call.tool_call_id, tool_name: call.tool_name, args: parsed.value });
      continue;
    }
    if (ctx.stopped()) break;
    ctx.onCall?.();
    if (!faulted && tool?.kind === "workspace") {
      faulted = true;
      await fault(ctx.faults, "during_tool_execution");
    }
    const output = tool == null
      ? { result: { error: tools.withheld.get(call.tool_name) ?? `unknown tool: ${call.tool_name}` }, isError: true }
      : await executeTool(tool, call.args, {
        planMode: tools.planMode, outputCapBytes: tools.resultCapBytes, toolCallId: call.tool_call_id, workspacesRoot: ctx.workspacesRoot, workspace: ctx.workspace,
        signal: ctx.signal, ...(ctx.timeoutMs != null ? { timeoutMs: ctx.timeoutMs } : {}),
      });
    results.push({ type: "tool-result", tool_call_id: call.tool_call_id, tool_name: call.tool_name,
      result: output.result, is_error: output.isError, provider_executed: false });
  }
  return { results, dynamic };
}

/** Every call of the batch may run again without effect (ToolDefinition.rerunnable), so its results may wait for
 * the next commit. */
export function allRerunnable(calls: PendingCall[], tools: ChatTools): boolean {
  return calls.every((call) => tools.byName.get(call.tool_name)?.rerunnable === true);
}

/** Synthetic results for calls an interrupt leaves unexecuted. */
export function cancellations(calls: PendingCall[]): StoredMessage[] {
  if (calls.length === 0) return [];
  return [{ role: "tool", content: calls.map((call) => ({ type: "tool-result", tool_call_id: call.tool_call_id,
    tool_name: call.tool_name, result: { error: "canceled: the user interrupted" }, is_error: true, provider_executed: false })) }];
}
