// What becomes of a batch's results (calls.ts runs the batch): committed as one tool row, handed to the
// transitions to ride with the next commit (read-only workspace calls: running them again after a crash has no
// effect, so the transaction they would cost buys nothing), or, with client calls among them, committed before the
// chat waits for the client (requires_action).
import type { Logger } from "../../src/log.ts";
import type { ChatTools } from "../../src/tools/index.ts";
import { fault } from "../faults.ts";
import { allRerunnable, cancellations, runLocalCalls, type CallContext } from "./calls.ts";
import type { Transitions } from "./transitions.ts";
import type { PendingCall, StoredMessage } from "./types.ts";

export interface AnswerContext extends CallContext {
  tx: Transitions;
  log: Logger;
  /** The client asked to stop: the batch is answered with what ran and cancellations, and nothing is committed. */
  interrupted: () => boolean;
}

export type Answered =
  /** The results are committed: the loop reads the history again. */
  | { kind: "committed" }
  /** The results ride with the next commit; the caller builds the next state from them. */
  | { kind: "deferred"; message: StoredMessage }
  /** Client calls wait: the chat is in requires_action. */
  | { kind: "paused" }
  /** An interrupt: the batch's rows for the interruption to write. */
  | { kind: "interrupted"; messages: StoredMessage[] }
  /** The run was stopped otherwise (lease lost, shutdown): nothing was written. */
  | { kind: "stopped" };

/** Runs local calls and commits their results; pauses for client (dynamic) calls. With `deferrable`, results of a
 * batch of read-only workspace calls are deferred instead. */
export async function answerCalls(calls: PendingCall[], tools: ChatTools, ctx: AnswerContext, deferrable: boolean): Promise<Answered> {
  const { results, dynamic } = await runLocalCalls(calls, tools, ctx);
  if (ctx.interrupted()) {
    // Answer every call of the batch (results so far, cancellations for the rest) so history stays well formed.
    const answered = new Set(results.map((r) => (r as { tool_call_id: string }).tool_call_id));
    const rest = cancellations(calls.filter((call) => !answered.has(call.tool_call_id)));
    return { kind: "interrupted", messages: [{ role: "tool", content: [...results, ...(rest[0]?.content ?? [])] }] };
  }
  if (ctx.stopped()) return { kind: "stopped" };
  if (deferrable && dynamic.length === 0 && results.length > 0 && allRerunnable(calls, tools)) {
    const message: StoredMessage = { role: "tool", content: results };
    ctx.tx.defer([message]);
    await fault(ctx.faults, "after_tool_results");
    return { kind: "deferred", message };
  }
  if (results.length > 0) {
    await ctx.tx.commitStep([{ role: "tool", content: results }]);
    await fault(ctx.faults, "after_tool_results");
  }
  if (dynamic.length > 0) {
    await ctx.tx.enterRequiresAction(dynamic);
    ctx.log.info({ calls: dynamic.length }, "waiting for client tool results");
    return { kind: "paused" };
  }
  return { kind: "committed" };
}
