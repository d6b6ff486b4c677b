// Deadlines on a run's progress (docs/workers.md). A provider attempt is aborted when its stream sends nothing for
// stream_idle_timeout_seconds or runs longer than step_timeout_seconds; the attempt then counts as a retryable
// transport error (kinds `stream_idle_timeout`, `step_timeout`), so the retry policy applies (retry.ts). Local tool
// calls have tool_call_timeout_seconds unless the tool sets its own (src/tools/registry.ts). And the lease is renewed
// only while the run makes progress (ProgressClock): a process wedged anywhere, for longer than
// progress_timeout_seconds, stops renewing, so its lease expires and another worker takes the chat.
import type { ClassifiedError, StepResult } from "../../src/providers/index.ts";
import type { RuntimeSettings } from "./config.ts";

export type WatchdogKind = "stream_idle_timeout" | "step_timeout";

/** The deadlines of one provider attempt: its signal aborts when either passes (or when the run's signal does). */
export class StepWatchdog {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly idleMs: number;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly stepTimer: ReturnType<typeof setTimeout>;
  fired: WatchdogKind | undefined;

  constructor(settings: RuntimeSettings, runSignal: AbortSignal) {
    this.idleMs = settings.streamIdleTimeoutMs;
    this.signal = AbortSignal.any([runSignal, this.controller.signal]);
    this.stepTimer = setTimeout(() => this.fire("step_timeout"), settings.stepTimeoutMs);
    this.touch();
  }

  private fire(kind: WatchdogKind): void {
    this.fired ??= kind;
    this.controller.abort(kind);
  }

  /** A stream event arrived: the idle deadline starts again. */
  touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.fire("stream_idle_timeout"), this.idleMs);
  }

  stop(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.stepTimer);
  }

  /** The attempt's result as the watchdog saw it: an attempt it aborted is a retryable error, not an interruption. */
  judge(result: StepResult, runSignal: AbortSignal): StepResult {
    if (this.fired == null || runSignal.aborted) return result;
    const error: ClassifiedError = { retryable: true, kind: this.fired, message: `provider error: ${this.fired}` };
    return { ...result, finish: "error", error };
  }
}

/** When the run last made progress (a stream event, a tool call starting, a pass of the loop). */
export class ProgressClock {
  private last = Date.now();

  mark = (): void => {
    this.last = Date.now();
  };

  /** Milliseconds since the last progress. */
  idleMs(): number {
    return Date.now() - this.last;
  }
}
