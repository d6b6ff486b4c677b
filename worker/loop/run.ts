// One runner's pass over a chat it holds the lease for: model steps, local tools, then pause (client tools),
// finish, or interruption. Every write is one fenced transition (transitions.ts); a stop for any reason other
// than an interrupt (lease lost, fence lost, shutdown) writes nothing more.
//
// Transactions per step: the assistant commit, plus one commit for the batch's local tool results; a final
// answer is followed by finish_turn. History is re-read (one read-only snapshot) before each model step.
// Except: results of read-only workspace calls (list, read, search) ride with the next commit (transitions.ts
// defers them) and the next step's state is built in memory (history.ts continueTurn). Running such a call again
// after a crash has no effect, so the transaction and the re-read they would cost buy nothing.
import type pg from "pg";
import type { DatabaseHealth } from "../../src/db/pool.ts";
import type { Logger } from "../../src/log.ts";
import type { ModelConfig, ModelRuntime, StepResult } from "../../src/providers/index.ts";
import { endsTurnAfter, toolsForChat, type ChatTools, type ToolDeployment } from "../../src/tools/index.ts";
import { observeValidation, recordProviderStep } from "../../src/metrics.ts";
import { openRunTools, type RunTools } from "../../src/mcp/run-tools.ts";
import { fault, type Faults } from "../faults.ts";
import { buildAssistantStep } from "./assistant.ts";
import { allRerunnable, cancellations, runLocalCalls } from "./calls.ts";
import { maybeCompact } from "./compaction.ts";
import { runStopHooks } from "./hooks.ts";
import { loadModelConfig, type RuntimeSettings } from "./config.ts";
import { continueTurn, loadTurnState, type PendingCall, type TurnState } from "./history.ts";
import type { ChatListener } from "./listener.ts";
import type { Subscribe } from "./lease.ts";
import { startHeartbeat } from "./heartbeat.ts";
import { streamWithRetry } from "./retry.ts";
import { ProgressClock } from "./watchdog.ts";
import {
  FinalizerByteCap, governingRequest, judgeStep, noCandidateOutcome, structuredCommit, type FailedOutcome,
} from "./structured.ts";
import { providerCapabilities } from "../../src/providers/index.ts";
import { sqlState, Transitions, type Fence, type StoredMessage } from "./transitions.ts";

export interface RuntimeDeps {
  pool: pg.Pool;
  /** The process's view of the database (src/db/pool.ts): waits through outages, one log line per outage. */
  health: DatabaseHealth;
  workerId: string;
  log: Logger;
  workspacesRoot: string;
  faults: Faults;
  listener: ChatListener;
  /** Abort functions of the runs in progress (graceful shutdown aborts them). */
  runs: Set<(reason: StopReason) => void>;
  stopping: () => boolean;
  stats: RuntimeStats;
  modelRuntime?: ModelRuntime;
  toolTimeoutMs?: number;
  /** Optional write and command tools (deployment configuration); default: read-only workspace tools. */
  toolDeployment?: ToolDeployment;
}

export interface RuntimeStats {
  acquired: number;
  /** Runs cut off by a lost database connection that resumed with a new lease in the same job (chat-run.ts). */
  resumedAfterOutage: number;
  /** Turns started by re-acquiring in the job that finished the previous turn (no job hop). */
  reacquiredInJob: number;
  turnsFinished: number;
}

/** interrupt: the client asked to stop (write the partial output); the others: write nothing. */
export type StopReason = "interrupt" | "lost" | "shutdown";
/** promoted: the turn ended and the queue head started a new one (status stays running). */
export type RunOutcome = "finished" | "promoted" | "paused" | "failed" | "lost" | "released";

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
    let stopHeartbeat: (() => void) | undefined;
    try {
      unsubscribe = await this.subscribe((n) => {
        if (n.status === "interrupting") this.stop("interrupt");
        // History changed under a running stream (an edit): the commit would be fenced, so stop early. Only a
        // newer version counts; a late notification of this runner's own commit carries an older one.
        else if (this.streaming && n.history_version != null && BigInt(n.history_version) > BigInt(this.tx.fence.historyVersion)) {
          this.stop("lost");
        }
      });
      stopHeartbeat = startHeartbeat({ tx: this.tx, settings: this.settings, progress: this.progress, log: this.log,
        stop: this.stop, stopped: () => this.stopReason != null });
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
      if (code === "CHTRN") return await this.afterRefusal();
      // Data PostgreSQL refuses (class 22: data exception; 54: program limit) fails the same way on every attempt:
      // the turn fails now, instead of spending every recovery on it.
      if (code != null && /^(22|54)/.test(code)) return await this.unstorable(code);
      // Unexpected: keep the lease so that it expires and the sweep counts a recovery (bounded), instead of
      // releasing it and retrying a deterministic failure forever.
      throw error;
    } finally {
      stopHeartbeat?.();
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
    const state = await loadTurnState(this.deps.pool, this.tx.fence.chatId);
    if (this.configVersion == null || state.configVersion > this.configVersion) this.configVersion = state.configVersion;
    return state;
  }

  private async modelConfig(state: TurnState): Promise<ModelConfig | null> {
    if (this.config === undefined) this.config = await loadModelConfig(this.deps.pool, state.chat.modelConfigId, this.configVersion);
    return this.config;
  }

  private async unstorable(code: string): Promise<RunOutcome> {
    this.tx.discardPending();
    await this.tx.finishError("unstorable_output", `the step's output could not be stored (SQLSTATE ${code})`);
    this.log.warn({ code }, "the step's output could not be stored; the turn failed");
    return "failed";
  }

  /** A transition refused because the chat's state moved (an interrupt arrived between our checks). */
  private async afterRefusal(): Promise<RunOutcome> {
    const state = await this.turnState();
    if (state.chat.status === "interrupting" && this.stopReason !== "lost") return this.interrupted([]);
    return "lost";
  }

  private async stopped(): Promise<RunOutcome> {
    if (this.stopReason === "shutdown") {
      await this.tx.release().catch(() => undefined);
      this.log.info("shutdown: step abandoned, lease released");
      return "released";
    }
    this.log.info("lease or fence lost; this runner stops without writing");
    return "lost";
  }

  private async loop(): Promise<RunOutcome> {
    let state = this.initial ?? await this.turnState();
    this.initial = null;
    for (;;) {
      this.progress.mark();
      if (state.chat.status === "interrupting" || this.stopReason === "interrupt") {
        return this.interrupted(cancellations(state.pending));
      }
      if (this.stopReason != null) return this.stopped();
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

  /** Streams, commits the assistant step; returns an outcome when the run ends here, else the next state when it is
   * known without a re-read (results deferred), else null. */
  private async modelStep(state: TurnState, tools: ChatTools): Promise<RunOutcome | TurnState | null> {
    await this.modelConfig(state);
    if (this.config == null) {
      await this.tx.finishError("configuration_error", "the chat's model configuration is missing or disabled");
      return "failed";
    }
    let specs = tools.specs;
    let governing: Extract<ReturnType<typeof governingRequest>, { ok: true }> | undefined;
    if (state.structured != null) {
      const checked = governingRequest(state.structured,
        [...tools.byName.keys(), ...state.chat.dynamicTools.map((tool) => tool.name)],
        { enabled: this.config.options.strictTools === true, perTool: providerCapabilities(this.config).strictPerTool });
      if (!checked.ok) return this.endStructured(checked.outcome);
      governing = checked;
      specs = [...specs, checked.tool];
    }
    // The finalizer's byte cap aborts only the provider request; the run itself goes on and counts a rejection.
    const capAbort = new AbortController();
    const cap = new FinalizerByteCap(() => capAbort.abort("finalizer arguments too large"));
    const stepStarted = performance.now();
    this.streaming = true;
    let attempt;
    try {
      attempt = await streamWithRetry({
        pool: this.deps.pool, log: this.log, config: this.config, runtime: this.deps.modelRuntime ?? {},
        request: { prompt: state.prompt, tools: specs }, settings: this.settings, tx: this.tx,
        signal: governing ? AbortSignal.any([this.controller.signal, capAbort.signal]) : this.controller.signal,
        faults: this.deps.faults, onProgress: this.progress.mark, ...(governing ? { onEvent: (event) => cap.accept(event) } : {}),
      });
    } finally {
      this.streaming = false;
    }
    const { result, attempts, retried } = attempt;
    // The step's last deltas are published by whatever this step commits next (transitions.ts).
    this.tx.carryDeltas(attempt.deltas);
    recordProviderStep(this.config.provider, (performance.now() - stepStarted) / 1000, result.finish, result.error?.kind);
    if (this.stopReason === "interrupt") return this.interrupted([], result);
    if (this.stopReason != null) return this.stopped();
    if (result.finish === "error" || (result.finish === "interrupted" && result.error != null)) {
      return this.failStep(result, attempts, state);
    }
    const built = buildAssistantStep(result, { attempts });
    if (governing != null && state.structured != null) {
      const judged = performance.now();
      const verdict = judgeStep(result, governing.validator);
      observeValidation((performance.now() - judged) / 1000);
      const commit = structuredCommit(verdict, built, state.structured, state.steps + 1, this.settings.finalizerRepairs, cap.exceeded,
        this.tx.deferredCount);
      if (commit.next.kind !== "ordinary") {
        // An accepted candidate without a fault point between the commits: the step and finish_turn in one
        // transaction (sql/120; it commits only the step when a stop hook is enabled, and the turn finishes below).
        if (commit.next.kind === "finish" && !retried && this.deps.faults.after_assistant_commit == null
          && this.deps.faults.after_candidate_commit == null) {
          const status = await this.tx.commitStepAndFinishTurn(commit.messages, commit.progress, null);
          this.log.info({ request_id: state.structured.requestId, verdict: verdict.kind }, "finalizer batch judged");
          if (status != null) return this.turnFinished(status, true);
          return this.finish({ ...state, structured: { ...state.structured, candidatePresent: true } });
        }
        await this.tx.commitStepJson(commit.messages, commit.progress);
        if (retried) await this.tx.recordRetryState(null);
        await fault(this.deps.faults, "after_assistant_commit");
        this.log.info({ request_id: state.structured.requestId, verdict: verdict.kind,
          ...(verdict.kind === "rejected" ? { reason: verdict.reason } : {}) }, "finalizer batch judged");
        if (verdict.kind === "rejected") await fault(this.deps.faults, "after_placeholder_commit");
        if (commit.next.kind === "fail") return this.endStructured(commit.next.outcome);
        if (commit.next.kind === "finish") {
          await fault(this.deps.faults, "after_candidate_commit");
          return this.finish({ ...state, structured: { ...state.structured, candidatePresent: true } });
        }
        return null;
      }
    }
    if (built.calls.length === 0 && !result.pauseTurn && state.structured == null && !retried
      && this.deps.faults.after_assistant_commit == null) {
      // A final answer of a plain turn: the step and finish_turn in one transaction (see above).
      const status = await this.tx.commitStepAndFinishTurn(JSON.stringify([built.message]), JSON.stringify({ steps: 1 }), null);
      if (status != null) return this.turnFinished(status, false);
      return this.finish(state);
    }
    await this.tx.commitStep([built.message], { steps: 1 });
    if (retried) await this.tx.recordRetryState(null);
    await fault(this.deps.faults, "after_assistant_commit");
    if (built.calls.length === 0 && !result.pauseTurn) return this.finish(state);
    if (built.calls.length === 0) return null;
    const answered = await this.answerCalls(built.calls, tools, state.chat.workspace, true);
    if (typeof answered === "string" || answered == null) return answered;
    const next = continueTurn(state, [built.message, answered]);
    if (!next.compaction.due) return next;
    // Compaction summarises committed rows only: commit the results and let the loop read the history again.
    await this.tx.flush();
    return null;
  }

  /** A structured request that fails for its own reasons ends the turn normally (the queue is promoted). */
  private async endStructured(outcome: FailedOutcome): Promise<RunOutcome> {
    const status = await this.tx.finishTurn(outcome);
    await fault(this.deps.faults, "after_receipt_commit");
    this.deps.stats.turnsFinished += 1;
    this.log.info({ code: outcome.code, status }, "structured request failed; turn finished");
    return status === "running" ? "promoted" : "finished";
  }

  private async failStep(result: StepResult, attempts: number, state: TurnState): Promise<RunOutcome> {
    const built = buildAssistantStep(result, { attempts });
    await this.tx.commitStep([built.message]);
    const error = result.error!;
    const message = attempts > 1 ? `${error.message}; gave up after ${attempts} attempts` : error.message;
    // A configuration problem is the request's own failure; provider failures are infrastructure (generation_failed).
    if (state.structured != null && error.kind === "configuration_error") {
      return this.endStructured({ status: "failed", code: "configuration_error", message });
    }
    await this.tx.finishError(error.kind === "configuration_error" ? "configuration_error" : "provider_error", message);
    this.log.warn({ kind: error.kind, status: error.status, attempts }, "step failed; turn ended with an error");
    return "failed";
  }

  /** Runs local calls and commits their results; pauses for client (dynamic) calls. Null: continue the loop.
   * With `deferrable`, results of a batch of read-only workspace calls are handed to the transitions to ride with the
   * next commit instead, and returned (the caller builds the next state from them). */
  private async answerCalls(calls: PendingCall[], tools: ChatTools, workspace: string | null,
    deferrable: boolean): Promise<RunOutcome | StoredMessage | null> {
    const { results, dynamic } = await runLocalCalls(calls, tools, {
      faults: this.deps.faults, workspacesRoot: this.deps.workspacesRoot, workspace, signal: this.controller.signal,
      stopped: () => this.stopReason != null, onCall: this.progress.mark,
      timeoutMs: this.deps.toolTimeoutMs ?? this.settings.toolCallTimeoutMs,
    });
    if (this.stopReason === "interrupt") {
      // Answer every call of the batch (results so far, cancellations for the rest) so history stays well formed.
      const answered = new Set(results.map((r) => (r as { tool_call_id: string }).tool_call_id));
      const rest = cancellations(calls.filter((call) => !answered.has(call.tool_call_id)));
      return this.interrupted([{ role: "tool", content: [...results, ...(rest[0]?.content ?? [])] }]);
    }
    if (this.stopReason != null) return this.stopped();
    if (deferrable && dynamic.length === 0 && results.length > 0 && allRerunnable(calls, tools)) {
      const message: StoredMessage = { role: "tool", content: results };
      this.tx.defer([message]);
      await fault(this.deps.faults, "after_tool_results");
      return message;
    }
    if (results.length > 0) {
      await this.tx.commitStep([{ role: "tool", content: results }]);
      await fault(this.deps.faults, "after_tool_results");
    }
    if (dynamic.length > 0) {
      await this.tx.enterRequiresAction(dynamic);
      this.log.info({ calls: dynamic.length }, "waiting for client tool results");
      return "paused";
    }
    return null;
  }

  private async finish(state: TurnState): Promise<RunOutcome> {
    const outcome = state.structured == null || state.structured.candidatePresent ? null : noCandidateOutcome(state.structured);
    // Stop hooks (hooks.ts) run when the turn is about to succeed. A continuation is committed there and the
    // loop starts over from the database; it happens at most once per turn, so this recursion is bounded.
    if (outcome == null) {
      const hooks = await runStopHooks({ pool: this.deps.pool, tx: this.tx, log: this.log, faults: this.deps.faults,
        signal: this.controller.signal, configVersion: this.configVersion });
      if (hooks.kind === "stopped") return this.stopReason === "interrupt" ? this.interrupted([]) : this.stopped();
      if (hooks.kind === "failed") {
        await this.tx.finishError("hook_failed", hooks.message);
        this.log.warn({ error: hooks.message }, "stop hook failed; the turn failed closed");
        return "failed";
      }
      if (hooks.kind === "continue") return this.loop();
    }
    return this.turnFinished(await this.tx.finishTurn(outcome), state.structured != null);
  }

  private async turnFinished(status: string, structured: boolean): Promise<RunOutcome> {
    if (structured) await fault(this.deps.faults, "after_receipt_commit");
    this.deps.stats.turnsFinished += 1;
    this.log.info({ status }, "turn finished");
    return status === "running" ? "promoted" : "finished";
  }

  /** Compacts the history when due (compaction.ts); true when it changed. */
  private async compact(state: TurnState): Promise<boolean> {
    if (!state.compaction.due) return false;
    const config = await this.modelConfig(state);
    if (config == null) return false;
    return maybeCompact({ pool: this.deps.pool, tx: this.tx, log: this.log, config,
      runtime: this.deps.modelRuntime ?? {}, signal: this.controller.signal, prompt: state.prompt, check: state.compaction });
  }

  private async interrupted(messages: StoredMessage[], result?: StepResult): Promise<RunOutcome> {
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
}
