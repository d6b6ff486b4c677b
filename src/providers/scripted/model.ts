// The scripted provider as a real LanguageModelV4, so scripted runs take exactly the
// streamStep path that real providers take (warnings, accumulation, abort, errors).
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import { createProviderStreamError } from "@ai-sdk/provider-utils";
import { syntheticApiError } from "../errors.ts";
import { planStep, type PlannedStep } from "./plan.ts";

const SCRIPTED_URL = "scripted://local";

/**
 * Steps whose simulated HTTP error was already served, so the retry succeeds. Shared by
 * every instance (the loop may build a new model per attempt); bounded because keys are
 * per conversation position.
 */
const servedErrors = new Set<string>();
const MAX_SERVED = 10_000;

function chunks(text: string): string[] {
  // Word-sized deltas, so consumers see a real stream rather than one blob.
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function splitArgs(raw: string): string[] {
  if (raw.length < 2) return [raw];
  const middle = Math.floor(raw.length / 2);
  return [raw.slice(0, middle), raw.slice(middle)];
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function streamParts(step: PlannedStep, modelId: string, promptChars: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", id: `resp_${step.key}`, modelId },
  ];
  let output = 0;
  if (step.reasoning != null) {
    parts.push({ type: "reasoning-start", id: "r0" });
    for (const delta of chunks(step.reasoning)) parts.push({ type: "reasoning-delta", id: "r0", delta });
    parts.push({ type: "reasoning-end", id: "r0" });
    output += estimateTokens(step.reasoning);
  }
  if (step.text != null) {
    parts.push({ type: "text-start", id: "t0" });
    for (const delta of chunks(step.text)) parts.push({ type: "text-delta", id: "t0", delta });
    parts.push({ type: "text-end", id: "t0" });
    output += estimateTokens(step.text);
  }
  for (const call of step.calls) {
    parts.push({ type: "tool-input-start", id: call.id, toolName: call.name });
    for (const delta of splitArgs(call.argsRaw)) parts.push({ type: "tool-input-delta", id: call.id, delta });
    parts.push({ type: "tool-input-end", id: call.id });
    parts.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.argsRaw });
    output += estimateTokens(call.argsRaw);
  }
  if (step.finish === "error") {
    parts.push({
      type: "error",
      error: createProviderStreamError({
        message: "scripted terminal failure",
        type: "invalid_request_error",
        statusCode: 400,
        isRetryable: false,
        data: null,
      }),
    });
  }
  const raw = { stop: "stop", "tool-calls": "tool_calls", length: "length", "content-filter": "content_filter", error: "error" }[
    step.finish
  ];
  parts.push({
    type: "finish",
    finishReason: { unified: step.finish, raw },
    usage: {
      inputTokens: { total: Math.ceil(promptChars / 4), noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: output, text: output, reasoning: undefined },
    },
  });
  return parts;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

export class ScriptedLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  readonly provider = "scripted";
  readonly modelId: string;
  readonly supportedUrls = {};

  constructor(modelId: string) {
    this.modelId = modelId;
  }

  async doGenerate(_options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    throw new Error("the scripted provider only streams");
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const signal = options.abortSignal;
    if (signal?.aborted === true) throw abortError(signal);
    const promptText = JSON.stringify(options.prompt);
    const step = planStep(options, promptText);
    if (step.errorStatus != null && !servedErrors.has(step.key)) {
      if (servedErrors.size >= MAX_SERVED) servedErrors.clear();
      servedErrors.add(step.key);
      throw syntheticApiError(step.errorStatus, SCRIPTED_URL);
    }
    const parts = streamParts(step, this.modelId, promptText.length);
    const finish = parts.pop() as LanguageModelV4StreamPart;
    let index = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      pull: async (controller) => {
        if (signal?.aborted === true) {
          controller.error(abortError(signal));
          return;
        }
        const next = parts[index++];
        if (next != null) {
          controller.enqueue(next);
          return;
        }
        if (step.delayMs != null && step.delayMs > 0) {
          const delay = step.delayMs;
          step.delayMs = 0;
          const aborted = await new Promise<boolean>((resolve) => {
            const onAbort = (): void => {
              clearTimeout(timer);
              resolve(true);
            };
            timer = setTimeout(() => {
              signal?.removeEventListener("abort", onAbort);
              resolve(false);
            }, delay);
            signal?.addEventListener("abort", onAbort, { once: true });
          });
          if (aborted && signal != null) {
            controller.error(abortError(signal));
            return;
          }
        }
        controller.enqueue(finish);
        controller.close();
      },
      cancel: () => clearTimeout(timer),
    });
    return { stream, request: { body: { scripted: true, key: step.key } } };
  }
}

export function scriptedModel(modelId: string): LanguageModelV4 {
  return new ScriptedLanguageModel(modelId);
}
