// One model step with chatd's own retry policy: retryable provider errors (408, 429, 5xx, 529,
// network, cut-off streams) are retried with bounded exponential backoff; while waiting, the retry state is
// visible in chats.retry_state (and a `retry` notification). Each attempt streams into its own preview episode.
import type pg from "pg";
import type { Logger } from "../../src/log.ts";
import { streamStep, type ModelConfig, type ModelRuntime, type StepEvent, type StepRequest, type StepResult } from "../../src/providers/index.ts";
import { fault, type Faults } from "../faults.ts";
import type { RuntimeSettings } from "./config.ts";
import { DeltaPublisher } from "./deltas.ts";
import type { Transitions } from "./transitions.ts";

export function backoffMs(attempt: number, settings: RuntimeSettings): number {
  return Math.min(settings.retryInitialDelayMs * 2 ** (attempt - 1), settings.retryMaxDelayMs);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

export interface StepAttempts {
  result: StepResult;
  attempts: number;
  /** A retry state was published (and must be cleared once the step is committed). */
  retried: boolean;
  /** The returned attempt's last part deltas, not yet published: they ride with the step's commit. */
  deltas: string[];
}

export async function streamWithRetry(input: {
  pool: pg.Pool;
  log: Logger;
  config: ModelConfig;
  runtime: ModelRuntime;
  request: Omit<StepRequest, "abortSignal" | "onEvent">;
  settings: RuntimeSettings;
  tx: Transitions;
  signal: AbortSignal;
  faults: Faults;
  /** Sees every stream event after it is published (the finalizer's byte cap). */
  onEvent?: (event: StepEvent) => void;
}): Promise<StepAttempts> {
  const { settings, tx, signal } = input;
  let retried = false;
  for (let attempt = 1; ; attempt++) {
    const publisher = new DeltaPublisher(input.pool, input.log, tx.fence);
    let hang: Promise<never> | undefined;
    let first = true;
    const result = await streamStep(input.config, {
      ...input.request,
      abortSignal: signal,
      onEvent: (event) => {
        if (first && event.type !== "warnings") {
          first = false;
          hang = fault(input.faults, "provider_stream") ?? undefined;
        }
        publisher.accept(event);
        input.onEvent?.(event);
      },
    }, input.runtime);
    const deltas = await publisher.finish();
    if (hang != null) await hang;
    const retryable = result.error?.retryable === true && (result.finish === "error" || result.finish === "interrupted");
    if (!retryable || attempt >= settings.retryMaxAttempts || signal.aborted) return { result, attempts: attempt, retried, deltas };
    // A failed attempt's deltas go out before its retry state (recordRetryState publishes carried deltas first).
    tx.carryDeltas(deltas);
    const delay = backoffMs(attempt, settings);
    const error = result.error!;
    input.log.warn({ attempt, delay_ms: delay, kind: error.kind, status: error.status }, "provider step failed; retrying");
    await tx.recordRetryState({
      attempt,
      max_attempts: settings.retryMaxAttempts,
      delay_ms: delay,
      retrying_at: new Date(Date.now() + delay).toISOString(),
      error: { kind: error.kind, message: error.message, ...(error.status != null ? { status: error.status } : {}) },
    });
    retried = true;
    await sleep(delay, signal);
    if (signal.aborted) return { result, attempts: attempt, retried, deltas: [] };
  }
}
