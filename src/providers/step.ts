// streamStep: one provider call for the worker loop. It never throws for provider
// failures; every outcome is a StepResult whose `finish` and `error` drive the loop's
// retry and finish policy. Only an error thrown by `onEvent` propagates.
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { StepAccumulator } from "./accumulator.ts";
import { classifyProviderError, configurationError } from "./errors.ts";
import { buildCallOptions, createLanguageModel, type ModelRuntime } from "./models.ts";
import { toV4Prompt } from "./prompt.ts";
import type { ClassifiedError, FinishReason, ModelConfig, StepEvent, StepRequest, StepResult } from "./types.ts";
import { classifyWarnings, type WarningClassification } from "./warnings.ts";

const INCOMPLETE_STREAM: ClassifiedError = {
  retryable: true,
  kind: "incomplete_stream",
  message: "provider error: incomplete_stream",
};

/**
 * Runs one provider step. `finish: "interrupted"` without `error` means the caller's
 * abortSignal fired; with `error.kind === "incomplete_stream"` the stream was cut off.
 */
export async function streamStep(
  config: ModelConfig,
  request: StepRequest,
  runtime: ModelRuntime = {},
): Promise<StepResult> {
  // Our own controller: aborted by the caller's signal, or by us when a warning shows the
  // request is not what chatd asked for (no point paying for that response).
  const controller = new AbortController();
  const callerSignal = request.abortSignal;
  const onCallerAbort = (): void => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted === true) controller.abort(callerSignal.reason);
  callerSignal?.addEventListener("abort", onCallerAbort, { once: true });

  let callbackError: { error: unknown } | undefined;
  const emit = (event: StepEvent): void => {
    if (callbackError != null) return;
    try {
      request.onEvent?.(event);
    } catch (error) {
      // The caller's bug, not the provider's: stop the request and rethrow it below.
      callbackError = { error };
      controller.abort();
    }
  };
  const acc = new StepAccumulator(emit);
  let classified: WarningClassification = { warnings: [], toolSchemaRewrites: [] };
  let failure: ClassifiedError | undefined;

  const result = (): StepResult => {
    let finish: FinishReason;
    let error = failure;
    if (callerSignal?.aborted === true) {
      finish = "interrupted";
      error = undefined;
    } else if (error != null) {
      finish = "error";
    } else if (acc.streamErrors.length > 0) {
      finish = "error";
      error = classifyProviderError(acc.streamErrors[0]);
    } else {
      // A stream that ended without a finish part never completed.
      finish = acc.finish?.unified ?? "interrupted";
      if (finish === "error") error = classifyProviderError(undefined);
      // Cut off by the provider or the network (not by the caller): worth a retry.
      if (finish === "interrupted") error = INCOMPLETE_STREAM;
    }
    acc.markIncomplete(finish);
    const raw = acc.finish?.raw;
    return {
      provider: config.provider,
      model: config.model,
      parts: acc.parts,
      finish,
      ...(raw != null ? { rawFinishReason: raw } : {}),
      pauseTurn: raw === "pause_turn" && finish === "stop",
      usage: acc.usage,
      warnings: classified.warnings,
      toolSchemaRewrites: classified.toolSchemaRewrites,
      ...(error != null ? { error } : {}),
      ...(acc.responseId != null ? { responseId: acc.responseId } : {}),
      ...(acc.finishMetadata != null ? { finishMetadata: acc.finishMetadata } : {}),
    };
  };

  /** The provider's stream was read to its end: nothing of the request is left to release. */
  let drained = false;
  try {
    if (controller.signal.aborted) return result();
    let stream: ReadableStream<LanguageModelV4StreamPart>;
    try {
      const model = createLanguageModel(config, runtime);
      const options = buildCallOptions(
        config,
        toV4Prompt(request.prompt),
        request.tools,
        request.toolChoice ?? "auto",
        controller.signal,
      );
      stream = (await model.doStream(options)).stream;
    } catch (err) {
      if (!controller.signal.aborted) failure = classifyProviderError(err);
      return result();
    }

    const reader = stream.getReader();
    // A pending read may not notice the abort on its own (e.g. a body already buffered);
    // cancelling the reader makes the interruption prompt.
    const cancel = (): void => void reader.cancel().catch(() => undefined);
    controller.signal.addEventListener("abort", cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          drained = true;
          break;
        }
        if (value.type === "stream-start") {
          classified = classifyWarnings(value.warnings, request.tools);
          if (classified.warnings.length > 0) emit({ type: "warnings", warnings: classified.warnings });
          if (classified.fatal != null) {
            failure = configurationError(classified.fatal);
            controller.abort();
            break;
          }
          continue;
        }
        acc.accept(value);
        if (callbackError != null) break;
      }
    } catch (err) {
      if (!controller.signal.aborted) failure = classifyProviderError(err);
    } finally {
      controller.signal.removeEventListener("abort", cancel);
      // A drained stream is closed and nobody reads it again; releasing the lock would only build (and capture
      // the stack of) the "reader released" TypeError that the spec puts into the reader's closed promise.
      if (!drained) reader.releaseLock();
    }
    if (callbackError != null) throw callbackError.error;
    return result();
  } finally {
    callerSignal?.removeEventListener("abort", onCallerAbort);
    // Release the HTTP request if the loop exited early (fatal warning, throwing callback). A stream read to its
    // end has released it already; aborting then would only build a DOMException (with its stack) for nobody.
    if (!drained && !controller.signal.aborted) controller.abort();
  }
}
