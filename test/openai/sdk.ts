// Shared by the /v1 tests: a live stack (API server, worker, scripted model) and the official `openai` SDK
// pointed at it, plus scripts for chatd's scripted provider (no keys, deterministic).
import OpenAI from "openai";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

export const FINALIZER = "coder_structured_output";

/** A user message that makes the scripted model call the finalizer with `output` (exact text) and stop. */
export function finalize(outputJson: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ script: [{ ...extra, tool_calls: [{ name: FINALIZER, args_raw: `{"output":${outputJson}}` }] }] });
}

/** A user message whose first step is held for `ms` (interruptible) before it finalizes. */
export function slowFinalize(outputJson: string, ms: number): string {
  return finalize(outputJson, { delay_ms: ms });
}

export function client(stack: LiveStack, token: string, options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}): OpenAI {
  return new OpenAI({ baseURL: `${stack.t.api.url}/v1`, apiKey: token, maxRetries: 0, ...options });
}

export { startLiveStack, type LiveStack };
