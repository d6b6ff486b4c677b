// The writes that end a run, each one transition, and the run's outcome: a finished turn (finish_turn, or a step
// commit that finished it), a failed one (finish_error), an interruption with its partial output, or a stop that
// writes nothing (a lost lease or fence; a shutdown releases the lease).
import type { Logger } from "../../src/log.ts";
import type { StepResult } from "../../src/providers/index.ts";
import { fault, type Faults } from "../faults.ts";
import { buildAssistantStep } from "./assistant.ts";
import type { Transitions } from "./transitions.ts";
import type { FailedOutcome, RunOutcome, StopReason, StoredMessage } from "./types.ts";

export class TurnEnd {
  private readonly tx: Transitions;
  private readonly log: Logger;
  private readonly faults: Faults;
  private readonly stats: { turnsFinished: number };

  constructor(tx: Transitions, log: Logger, faults: Faults, stats: { turnsFinished: number }) {
    this.tx = tx;
    this.log = log;
    this.faults = faults;
    this.stats = stats;
  }

  /** The turn is finished (with `outcome`: its structured request failed for its own reasons); status: the chat's. */
  async finished(status: string, structured: boolean, outcome: FailedOutcome | null = null): Promise<RunOutcome> {
    if (structured) await fault(this.faults, "after_receipt_commit");
    this.stats.turnsFinished += 1;
    if (outcome == null) this.log.info({ status }, "turn finished");
    else this.log.info({ code: outcome.code, status }, "structured request failed; turn finished");
    return status === "running" ? "promoted" : "finished";
  }

  /** A structured request that fails for its own reasons ends the turn normally (the queue is promoted). */
  async structuredFailed(outcome: FailedOutcome): Promise<RunOutcome> {
    return this.finished(await this.tx.finishTurn(outcome), true, outcome);
  }

  /** A step the provider failed (after chatd's retries): the step is kept, the turn fails. */
  async stepFailed(result: StepResult, attempts: number, structured: boolean): Promise<RunOutcome> {
    const built = buildAssistantStep(result, { attempts });
    await this.tx.commitStep([built.message]);
    const error = result.error!;
    const message = attempts > 1 ? `${error.message}; gave up after ${attempts} attempts` : error.message;
    // A configuration problem is the request's own failure; provider failures are infrastructure (generation_failed).
    if (structured && error.kind === "configuration_error") {
      return this.structuredFailed({ status: "failed", code: "configuration_error", message });
    }
    await this.tx.finishError(error.kind === "configuration_error" ? "configuration_error" : "provider_error", message);
    this.log.warn({ kind: error.kind, status: error.status, attempts }, "step failed; turn ended with an error");
    return "failed";
  }

  /** A commit PostgreSQL refused for its data: it would fail the same way on every attempt. */
  async unstorable(code: string): Promise<RunOutcome> {
    this.tx.discardPending();
    await this.tx.finishError("unstorable_output", `the step's output could not be stored (SQLSTATE ${code})`);
    this.log.warn({ code }, "the step's output could not be stored; the turn failed");
    return "failed";
  }

  /** The client's interrupt: the partial step (from `result`) and `messages` are written with it. */
  async interrupted(messages: StoredMessage[], result?: StepResult): Promise<RunOutcome> {
    const partial: StoredMessage[] = [];
    if (result != null) {
      const built = buildAssistantStep(result, { attempts: 1, interrupted: true });
      if (!built.empty) partial.push(built.message);
    }
    partial.push(...messages);
    const status = await this.tx.finishInterruption(partial);
    this.log.info({ status }, "interruption finished");
    return status === "running" ? "promoted" : "finished";
  }

  /** Stopped for another reason than an interrupt: nothing is written. */
  async stopped(reason: StopReason | undefined): Promise<RunOutcome> {
    if (reason === "shutdown") {
      await this.tx.release().catch(() => undefined);
      this.log.info("shutdown: step abandoned, lease released");
      return "released";
    }
    this.log.info("lease or fence lost; this runner stops without writing");
    return "lost";
  }
}
