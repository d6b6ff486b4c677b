// Deadlines on a run's progress (docs/workers.md). A provider attempt is aborted when its stream sends nothing for
// stream_idle_timeout_seconds or runs longer than step_timeout_seconds; the attempt then counts as a retryable
// transport error (kinds `stream_idle_timeout`, `step_timeout`), so the retry policy applies (retry.ts). Local tool
// calls have tool_call_timeout_seconds unless the tool sets its own (src/tools/registry.ts). And the lease is renewed
// only while the run makes progress (ProgressClock): a process wedged anywhere, for longer than
// progress_timeout_seconds, stops renewing, so its lease expires and another worker takes the chat.
import type { ClassifiedError, StepResult } from "../../src/providers/index.ts";
import type { RuntimeSettings } from "./config.ts";

export type WatchdogKind = "stream_idle_timeout" | "step_timeout";

const MAX_DELAY_MS = 2 ** 31 - 1;

/** The deadlines of one provider attempt: its signal aborts when either passes (or when the run's signal does).
 * One timer serves both deadlines and a stream event only notes its time: re-arming a timer per event, and
 * AbortSignal.any per attempt (a WeakRef and a FinalizationRegistry entry), were ~3% of the worker's samples
 * (`perf record` of the worker under `node bench/e2e.ts`, node --perf-basic-prof). The timer is set for the nearer
 * deadline; when it finds that events moved the idle deadline on, it sets itself again. */
export class StepWatchdog {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly runSignal: AbortSignal;
  private readonly idleMs: number;
  /** performance.now() of the last stream event (or of the start) and of the step's deadline. */
  private lastEvent = performance.now();
  private readonly stepDeadline: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  fired: WatchdogKind | undefined;

  constructor(settings: RuntimeSettings, runSignal: AbortSignal) {
    this.idleMs = settings.streamIdleTimeoutMs;
    this.stepDeadline = this.lastEvent + settings.stepTimeoutMs;
    this.signal = this.controller.signal;
    this.runSignal = runSignal;
    if (runSignal.aborted) this.controller.abort(runSignal.reason);
    else runSignal.addEventListener("abort", this.forwardAbort, { once: true });
    this.check();
  }

  private readonly forwardAbort = (): void => this.controller.abort(this.runSignal.reason);

  private readonly check = (): void => {
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    const now = performance.now();
    const idleDeadline = this.lastEvent + this.idleMs;
    if (now >= this.stepDeadline) return this.fire("step_timeout");
    if (now >= idleDeadline) return this.fire("stream_idle_timeout");
    // Capped at setTimeout's largest delay, beyond which Node would fire after 1 ms.
    this.timer = setTimeout(this.check, Math.min(MAX_DELAY_MS, Math.ceil(Math.min(idleDeadline, this.stepDeadline) - now)));
  };

  private fire(kind: WatchdogKind): void {
    this.fired ??= kind;
    this.controller.abort(kind);
  }

  /** A stream event arrived: the idle deadline starts again. */
  touch(): void {
    this.lastEvent = performance.now();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.runSignal.removeEventListener("abort", this.forwardAbort);
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
