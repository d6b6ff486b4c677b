// How a streamed step is committed, one path per kind of step. A step that leaves work in the turn (calls to
// answer, a paused step, a rejected finalizer batch with repairs left) is one commit_step. A step that ends the turn
// (a final answer, an accepted candidate, a finalizer failure) is committed with the turn's end in one transaction
// (commit_step_and_finish_turn, sql/120; with a stop hook enabled it commits the step alone, and the run ends the turn
// after the hooks). Configured fault points never change that path: the kill tests stop in front of the commit
// (before_final_commit) or after it, on the path production takes.
import type { Logger } from "../../src/log.ts";
import { observeValidation } from "../../src/metrics.ts";
import type { CompiledSchema } from "../../src/structured/index.ts";
import { fault, type Faults } from "../faults.ts";
import type { StreamedStep } from "./model-step.ts";
import { judgeStep, noCandidateOutcome, structuredCommit } from "./structured.ts";
import type { Transitions } from "./transitions.ts";
import type { BuiltStep, FailedOutcome, StructuredState, TurnState } from "./types.ts";

export interface CommitContext {
  tx: Transitions;
  faults: Faults;
  log: Logger;
}

/** What the run does once the step is committed. */
export type AfterCommit =
  /** The commit finished the turn too (a failed structured request: with its outcome); status: the chat's new one. */
  | { kind: "finished"; status: string; outcome: FailedOutcome | null }
  /** The step is committed, the turn is not (a stop hook is enabled): the run finishes it after the hooks. */
  | { kind: "finish"; state: TurnState }
  /** Likewise for a structured request that failed: the run finishes the turn with this outcome. */
  | { kind: "fail"; outcome: FailedOutcome }
  /** The turn goes on with another model step, from a fresh read of the history. */
  | { kind: "continue" };

const ONE_STEP = '{"steps":1}';

/** A step with calls to answer, or one the provider paused: the turn goes on. */
export async function commitToolStep(ctx: CommitContext, built: BuiltStep, retried: boolean): Promise<void> {
  await commitOpen(ctx, JSON.stringify([built.message]), ONE_STEP, retried);
}

/** A final answer ends the turn; a structured request it leaves without a candidate fails (noCandidateOutcome). */
export async function commitFinalStep(ctx: CommitContext, built: BuiltStep, retried: boolean, state: TurnState): Promise<AfterCommit> {
  const outcome = state.structured == null ? null : noCandidateOutcome(state.structured);
  const status = await commitClosing(ctx, JSON.stringify([built.message]), ONE_STEP, outcome, retried);
  return status != null ? { kind: "finished", status, outcome } : { kind: "finish", state };
}

/** A step of a structured request, judged by the finalizer rules (structured.ts). Null: the step does not involve
 * the finalizer, so it is an ordinary tool or final step. */
export async function commitFinalizerStep(ctx: CommitContext, step: StreamedStep & { validator: CompiledSchema },
  built: BuiltStep, state: TurnState & { structured: StructuredState }, repairs: number): Promise<AfterCommit | null> {
  const judged = performance.now();
  const verdict = judgeStep(step.result, step.validator);
  observeValidation((performance.now() - judged) / 1000);
  const commit = structuredCommit(verdict, built, state.structured, state.steps + 1, repairs, step.capExceeded,
    ctx.tx.deferredCount);
  const { next } = commit;
  if (next.kind === "ordinary") return null;
  const outcome = next.kind === "fail" ? next.outcome : null;
  let status: string | null = null;
  if (next.kind === "continue") await commitOpen(ctx, commit.messages, commit.progress, step.retried);
  else status = await commitClosing(ctx, commit.messages, commit.progress, outcome, step.retried);
  ctx.log.info({ request_id: state.structured.requestId, verdict: verdict.kind,
    ...(verdict.kind === "rejected" ? { reason: verdict.reason } : {}) }, "finalizer batch judged");
  if (verdict.kind === "rejected") await fault(ctx.faults, "after_placeholder_commit");
  if (next.kind === "continue") return { kind: "continue" };
  if (status != null) return { kind: "finished", status, outcome };
  if (outcome != null) return { kind: "fail", outcome };
  // The candidate is durable and the turn still open: a restart from here finishes the turn without the model.
  await fault(ctx.faults, "after_candidate_commit");
  return { kind: "finish", state: { ...state, structured: { ...state.structured, candidatePresent: true } } };
}

/** The step alone (commit_step). */
async function commitOpen(ctx: CommitContext, messagesJson: string, progressJson: string, retried: boolean): Promise<void> {
  await ctx.tx.commitStepJson(messagesJson, progressJson);
  if (retried) await ctx.tx.recordRetryState(null);
  await fault(ctx.faults, "after_assistant_commit");
}

/** The step and the turn's end in one transaction; the chat's new status. Null: a stop hook is enabled, so only the
 * step was committed (hooks run before a turn ends) and the run finishes the turn. */
async function commitClosing(ctx: CommitContext, messagesJson: string, progressJson: string, outcome: FailedOutcome | null,
  retried: boolean): Promise<string | null> {
  await fault(ctx.faults, "before_final_commit");
  const status = await ctx.tx.commitStepAndFinishTurn(messagesJson, progressJson, outcome);
  // finish_turn cleared the retry state with the rest of the turn.
  if (status != null) return status;
  if (retried) await ctx.tx.recordRetryState(null);
  await fault(ctx.faults, "after_assistant_commit");
  return null;
}
