// One runner's pass over a chat it holds the lease for: model steps, local tools, then pause (client tools),
// finish, or interruption. Every write is one fenced transition (transitions.ts); a stop for any reason other
// than an interrupt (lease lost, fence lost, shutdown) writes nothing more.
//
// Transactions per step: the assistant commit, plus one commit for the batch's local tool results; a step that ends
// the turn is committed with finish_turn in one transaction (step-commit.ts). History is re-read (one read-only
// snapshot) before each model step.
// Except: results of read-only workspace calls (list, read, search) ride with the next commit (transitions.ts
// defers them) and the next step's state is built in memory (history.ts continueTurn). Running such a call again
// after a crash has no effect, so the transaction and the re-read they would cost buy nothing.
import type { Logger } from "../../src/log.ts";
import type { ModelConfig } from "../../src/providers/index.ts";
import { endsTurnAfter, toolsForChat, type ChatTools } from "../../src/tools/index.ts";
import { openRunTools, type RunTools } from "../../src/mcp/run-tools.ts";
import { buildAssistantStep } from "./assistant.ts";
import { cancellations } from "./calls.ts";
import { maybeCompact } from "./compaction.ts";
import { runStopHooks } from "./hooks.ts";
import { loadModelConfig, type RuntimeSettings } from "./config.ts";
import { continueTurn, loadTurnState } from "./history.ts";
import type { Subscribe } from "./lease.ts";
import { streamModelStep } from "./model-step.ts";
import { answerCalls } from "./results.ts";
import { commitFinalizerStep, commitFinalStep, commitToolStep, type AfterCommit } from "./step-commit.ts";
import { ProgressClock } from "./watchdog.ts";
import type { RuntimeDeps } from "./runtime.ts";
import { noCandidateOutcome } from "./structured.ts";
import { sqlState, Transitions } from "./transitions.ts";
import { TurnEnd } from "./turn-end.ts";
import type { Fence, PendingCall, RunOutcome, StopReason, StoredMessage, TurnState } from "./types.ts";

export interface LeaseContext {
  /** The turn state the acquire statement read (lease.ts); without it the run reads the state first. */
  initial?: TurnState;
  /** How the run listens to its chat (lease.ts ChatSubscription); default: its own subscription. */
  subscribe?: Subscribe;
}

/** A run fenced out after a database outage during it: resumed like a lost connection (chat-run.ts). */
export class CutOffByOutage extends Error {
  constructor(cause: unknown) {
    super("the run's lease ran out while the database was unreachable", { cause });
  }
}

export async function runWithLease(deps: RuntimeDeps, fence: Fence, settings: RuntimeSettings,
  context: LeaseContext = {}): Promise<RunOutcome> {
  return new ChatRun(deps, fence, settings, context).run();
}

class ChatRun {
  private readonly deps: RuntimeDeps;
  private readonly tx: Transitions;
  private readonly end: TurnEnd;
  private readonly settings: RuntimeSettings;
  private readonly controller = new AbortController();
  private readonly log: Logger;
  private stopReason: StopReason | undefined;
  private streaming = false;
  /** The lease is renewed only while this moves (watchdog.ts). */
  private readonly progress = new ProgressClock();
  /** The process's outage count when the run started (CutOffByOutage). */
  private readonly outagesAtStart: number;
  private config: ModelConfig | null | undefined;
  /** Subagent and MCP tools, opened once per run (so once per turn) and closed when the run ends. */
  private runTools: Promise<RunTools> | undefined;
  /** The newest config version this run has read: cached configuration older than it is read again. */
  private configVersion: bigint | null;
  /** The state read with the lease, used by the first pass of the loop only. */
  private initial: TurnState | null;

  private readonly subscribe: Subscribe;

  constructor(deps: RuntimeDeps, fence: Fence, settings: RuntimeSettings, context: LeaseContext) {
    this.deps = deps;
    this.tx = new Transitions(deps.pool, fence);
    this.settings = settings;
    this.initial = context.initial ?? null;
    this.configVersion = context.initial?.configVersion ?? null;
    this.subscribe = context.subscribe ?? (async (handler) => {
      const unwatch = await deps.listener.watch(fence.chatId, handler);
      return async () => unwatch();
    });
    this.log = deps.log.child({ chat_id: fence.chatId, runner_id: fence.runnerId });
    this.end = new TurnEnd(this.tx, this.log, deps.faults, deps.stats);
    this.outagesAtStart = deps.health.outages;
  }

  private stop = (reason: StopReason): void => {
    // A lost lease outranks an interrupt: without the lease nothing may be written.
    if (this.stopReason == null || reason === "lost") this.stopReason = reason;
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  };

  async run(): Promise<RunOutcome> {
    this.deps.runs.add(this.stop);
    let unsubscribe: (() => Promise<void>) | undefined;
    let unregister: (() => void) | undefined;
    try {
      unsubscribe = await this.subscribe((n) => {
        if (n.status === "interrupting") this.stop("interrupt");
        // History changed under a running stream (an edit): the commit would be fenced, so stop early. Only a
        // newer version counts; a late notification of this runner's own commit carries an older one.
        else if (this.streaming && n.history_version != null && BigInt(n.history_version) > BigInt(this.tx.fence.historyVersion)) {
          this.stop("lost");
        }
      });
      unregister = this.deps.leases.register({ chatId: this.tx.fence.chatId, runnerId: this.tx.fence.runnerId,
        settings: this.settings, progress: this.progress, log: this.log, stop: this.stop, stopped: () => this.stopReason != null });
      return await this.loop();
    } catch (error) {
      const code = sqlState(error);
      // The lease ran out while the database was away (its renewals could not get through): not a lost race but
      // an outage, which the job resumes from (chat-run.ts), and a new lease shows whether another runner has it.
      if (code === "CHFNC" && this.deps.health.outages !== this.outagesAtStart) throw new CutOffByOutage(error);
      if (code === "CHFNC") {
        this.log.info("fence lost; this runner stops without writing");
        return "lost";
      }
      // The chat was deleted under the run (sql/160 _delete_chats): nothing is left to write to, nor to recover.
      if (code === "CHNTF") {
        this.log.info("chat deleted; this runner stops without writing");
        return "lost";
      }
      if (code === "CHTRN") return await this.afterRefusal();
      // Data PostgreSQL refuses (class 22: data exception; 54: program limit) fails the same way on every attempt:
      // the turn fails now, instead of spending every recovery on it.
      if (code != null && /^(22|54)/.test(code)) return await this.end.unstorable(code);
      // Unexpected: keep the lease so that it expires and the sweep counts a recovery (bounded), instead of
      // releasing it and retrying a deterministic failure forever.
      throw error;
    } finally {
      unregister?.();
      this.deps.runs.delete(this.stop);
      await this.runTools?.then((opened) => opened.close()).catch(() => undefined);
      await unsubscribe?.().catch(() => undefined);
    }
  }

  private openTools(chat: TurnState["chat"]): Promise<RunTools> {
    this.runTools ??= openRunTools({
      pool: this.deps.pool, log: this.log, chatId: this.tx.fence.chatId, runnerId: this.tx.fence.runnerId,
      subscribe: (chatId, onChange) => this.deps.listener.subscribe(chatId, () => onChange()),
      chat: { parentChatId: chat.parentChatId, mcpServerIds: chat.mcpServerIds },
    });
    return this.runTools;
  }

  /** loadTurnState, noting the config version it read. */
  private async turnState(): Promise<TurnState> {
    const state = await loadTurnState(this.deps.pool, this.tx.fence.chatId, this.deps.toolDeployment.resultCapBytes);
    if (this.configVersion == null || state.configVersion > this.configVersion) this.configVersion = state.configVersion;
    return state;
  }

  private async modelConfig(state: TurnState): Promise<ModelConfig | null> {
    if (this.config === undefined) this.config = await loadModelConfig(this.deps.pool, state.chat.modelConfigId, this.configVersion);
    return this.config;
  }

  /** A transition refused because the chat's state moved (an interrupt arrived between our checks). */
  private async afterRefusal(): Promise<RunOutcome> {
    const state = await this.turnState();
    if (state.chat.status === "interrupting" && this.stopReason !== "lost") return this.end.interrupted([]);
    return "lost";
  }

  private async loop(): Promise<RunOutcome> {
    let state = this.initial ?? await this.turnState();
    this.initial = null;
    for (;;) {
      this.progress.mark();
      if (state.chat.status === "interrupting" || this.stopReason === "interrupt") {
        return this.end.interrupted(cancellations(state.pending));
      }
      if (this.stopReason != null) return this.end.stopped(this.stopReason);
      // A validated candidate is durable: a restart after its commit goes straight to finishing the turn.
      if (state.structured?.candidatePresent === true) return this.finish(state);
      const tools = toolsForChat(state.chat, (await this.openTools(state.chat)).tools, this.deps.toolDeployment);
      // Calls of a committed step that have no result yet: this runner's own, or a crashed runner's.
      if (state.pending.length > 0) {
        const outcome = await this.answerCalls(state.pending, tools, state.chat.workspace, false);
        if (typeof outcome === "string") return outcome;
        state = await this.turnState();
        continue;
      }
      if (state.answered) return this.finish(state);
      // A stop-after tool (plan mode's propose_plan) answered in the latest step ends the turn, also on recovery.
      if (endsTurnAfter(state.prompt, tools.byName)) return this.finish(state);
      if (state.steps >= this.settings.maxStepsPerTurn) {
        this.log.warn({ steps: state.steps }, "step limit reached; finishing the turn");
        return this.finish(state);
      }
      // Compaction (compaction.ts) runs only here, between steps: no call is waiting for its result.
      if (await this.compact(state) || this.stopReason != null) {
        state = await this.turnState();
        continue;
      }
      const step = await this.modelStep(state, tools);
      if (typeof step === "string") return step;
      state = step ?? await this.turnState();
    }
  }

  /** One model step: streams it, then commits it by its kind (step-commit.ts). Returns an outcome when the run ends
   * here, else the next state when it is known without a re-read (results deferred), else null. */
  private async modelStep(state: TurnState, tools: ChatTools): Promise<RunOutcome | TurnState | null> {
    const config = await this.modelConfig(state);
    if (config == null) {
      await this.tx.finishError("configuration_error", "the chat's model configuration is missing or disabled");
      return "failed";
    }
    this.streaming = true;
    let step;
    try {
      step = await streamModelStep({ pool: this.deps.pool, log: this.log, config, runtime: this.deps.modelRuntime ?? {},
        settings: this.settings, tx: this.tx, faults: this.deps.faults, signal: this.controller.signal,
        onProgress: this.progress.mark }, state, tools);
    } finally {
      this.streaming = false;
    }
    if ("refused" in step) return this.end.structuredFailed(step.refused);
    const { result, attempts, retried, validator } = step;
    if (this.stopReason === "interrupt") return this.end.interrupted([], result);
    if (this.stopReason != null) return this.end.stopped(this.stopReason);
    if (result.finish === "error" || (result.finish === "interrupted" && result.error != null)) {
      return this.end.stepFailed(result, attempts, state.structured != null);
    }
    const built = buildAssistantStep(result, { attempts });
    const ctx = { tx: this.tx, faults: this.deps.faults, log: this.log };
    if (validator != null && state.structured != null) {
      const after = await commitFinalizerStep(ctx, { ...step, validator }, built, { ...state, structured: state.structured },
        this.settings.finalizerRepairs);
      if (after != null) return this.afterCommit(after, state);
    }
    if (built.calls.length === 0 && !result.pauseTurn) return this.afterCommit(await commitFinalStep(ctx, built, retried, state), state);
    await commitToolStep(ctx, built, retried);
    if (built.calls.length === 0) return null;
    const answered = await this.answerCalls(built.calls, tools, state.chat.workspace, true);
    if (typeof answered === "string" || answered == null) return answered;
    const next = continueTurn(state, [built.message, answered]);
    if (!next.compaction.due) return next;
    // Compaction summarises committed rows only: commit the results and let the loop read the history again.
    await this.tx.flush();
    return null;
  }

  private async afterCommit(after: AfterCommit, state: TurnState): Promise<RunOutcome | null> {
    switch (after.kind) {
      case "finished": return this.end.finished(after.status, state.structured != null, after.outcome);
      case "finish": return this.finish(after.state);
      case "fail": return this.end.structuredFailed(after.outcome);
      case "continue": return null;
    }
  }

  /** Answers a batch of calls (results.ts). Null: continue the loop; a message: the deferred results. */
  private async answerCalls(calls: PendingCall[], tools: ChatTools, workspace: string | null,
    deferrable: boolean): Promise<RunOutcome | StoredMessage | null> {
    const answered = await answerCalls(calls, tools, {
      tx: this.tx, log: this.log, faults: this.deps.faults, workspacesRoot: this.deps.workspacesRoot, workspace,
      signal: this.controller.signal, onCall: this.progress.mark, timeoutMs: this.deps.toolTimeoutMs ?? this.settings.toolCallTimeoutMs,
      stopped: () => this.stopReason != null, interrupted: () => this.stopReason === "interrupt",
    }, deferrable);
    switch (answered.kind) {
      case "interrupted": return this.end.interrupted(answered.messages);
      case "stopped": return this.end.stopped(this.stopReason);
      case "paused": return "paused";
      case "deferred": return answered.message;
      case "committed": return null;
    }
  }

  private async finish(state: TurnState): Promise<RunOutcome> {
    const outcome = state.structured == null || state.structured.candidatePresent ? null : noCandidateOutcome(state.structured);
    // Stop hooks (hooks.ts) run when the turn is about to succeed. A continuation is committed there and the
    // loop starts over from the database; it happens at most once per turn, so this recursion is bounded.
    if (outcome == null) {
      const hooks = await runStopHooks({ pool: this.deps.pool, tx: this.tx, log: this.log, faults: this.deps.faults,
        signal: this.controller.signal, configVersion: this.configVersion });
      if (hooks.kind === "stopped") return this.stopReason === "interrupt" ? this.end.interrupted([]) : this.end.stopped(this.stopReason);
      if (hooks.kind === "failed") {
        await this.tx.finishError("hook_failed", hooks.message);
        this.log.warn({ error: hooks.message }, "stop hook failed; the turn failed closed");
        return "failed";
      }
      if (hooks.kind === "continue") return this.loop();
    }
    return this.end.finished(await this.tx.finishTurn(outcome), state.structured != null, outcome);
  }

  /** Compacts the history when due (compaction.ts); true when it changed. */
  private async compact(state: TurnState): Promise<boolean> {
    if (!state.compaction.due) return false;
    const config = await this.modelConfig(state);
    if (config == null) return false;
    return maybeCompact({ pool: this.deps.pool, tx: this.tx, log: this.log, config,
      runtime: this.deps.modelRuntime ?? {}, signal: this.controller.signal, prompt: state.prompt, check: state.compaction });
  }
}
