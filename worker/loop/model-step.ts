// The streaming half of a model step: the request (with the finalizer tool when the turn governs a structured
// request), the provider stream with chatd's retries (retry.ts), and the finalizer's byte cap. Nothing is committed
// here: the step's last part deltas are handed to the transitions, to ride with whatever commits next.
import type pg from "pg";
import type { Logger } from "../../src/log.ts";
import { recordProviderStep } from "../../src/metrics.ts";
import { providerCapabilities, type ModelConfig, type ModelRuntime, type StepResult } from "../../src/providers/index.ts";
import type { CompiledSchema } from "../../src/structured/index.ts";
import type { ChatTools } from "../../src/tools/index.ts";
import type { Faults } from "../faults.ts";
import type { RuntimeSettings } from "./config.ts";
import { streamWithRetry } from "./retry.ts";
import { FinalizerByteCap, governingRequest } from "./structured.ts";
import type { Transitions } from "./transitions.ts";
import type { FailedOutcome, TurnState } from "./types.ts";

export interface StreamContext {
  pool: pg.Pool;
  log: Logger;
  config: ModelConfig;
  runtime: ModelRuntime;
  settings: RuntimeSettings;
  tx: Transitions;
  faults: Faults;
  signal: AbortSignal;
  onProgress: () => void;
}

export interface StreamedStep {
  result: StepResult;
  attempts: number;
  /** A retry state was published: the step's commit clears it. */
  retried: boolean;
  /** The structured request's validator when the step governs one (structured.ts judges the step with it). */
  validator: CompiledSchema | null;
  /** The finalizer's arguments passed the byte cap, so its request was cut off. */
  capExceeded: boolean;
}

/** Streams one step; `refused` when the turn's structured request cannot be offered (no provider call was made). */
export async function streamModelStep(ctx: StreamContext, state: TurnState, tools: ChatTools):
  Promise<StreamedStep | { refused: FailedOutcome }> {
  let specs = tools.specs;
  let validator: CompiledSchema | null = null;
  if (state.structured != null) {
    const checked = governingRequest(state.structured,
      [...tools.byName.keys(), ...state.chat.dynamicTools.map((tool) => tool.name)],
      { enabled: ctx.config.options.strictTools === true, perTool: providerCapabilities(ctx.config).strictPerTool });
    if (!checked.ok) return { refused: checked.outcome };
    validator = checked.validator;
    specs = [...specs, checked.tool];
  }
  // The finalizer's byte cap aborts only the provider request; the run itself goes on and counts a rejection.
  const capAbort = new AbortController();
  const cap = new FinalizerByteCap(() => capAbort.abort("finalizer arguments too large"));
  const started = performance.now();
  const { result, attempts, retried, deltas } = await streamWithRetry({
    pool: ctx.pool, log: ctx.log, config: ctx.config, runtime: ctx.runtime,
    request: { prompt: state.prompt, tools: specs }, settings: ctx.settings, tx: ctx.tx,
    signal: validator != null ? AbortSignal.any([ctx.signal, capAbort.signal]) : ctx.signal,
    faults: ctx.faults, onProgress: ctx.onProgress, ...(validator != null ? { onEvent: (event) => cap.accept(event) } : {}),
  });
  ctx.tx.carryDeltas(deltas);
  recordProviderStep(ctx.config.provider, (performance.now() - started) / 1000, result.finish, result.error?.kind);
  return { result, attempts, retried, validator, capExceeded: cap.exceeded };
}
