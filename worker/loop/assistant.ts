// A provider StepResult → the stored assistant row plus its private internals:
// replay metadata per part index, the exact argument text, and the finish provenance. Tool calls are kept
// only from a step that completed them (finish `tool-calls`/`stop`, arguments not cut off); every other call is
// dropped from the content and listed in the provenance, so a truncated, refused, errored or interrupted step
// can never execute a call whose arguments are incomplete.
import type { JSONObject, ReplayMetadata, StepResult } from "../../src/providers/index.ts";
import { parseToolArgs } from "../../src/tools/index.ts";
import type { BuiltStep, PendingCall } from "./types.ts";

/** Largest argument text kept verbatim for replay; larger ones replay from the stored jsonb value. */
const MAX_RAW_ARGS_BYTES = 256 * 1024;

export function buildAssistantStep(result: StepResult, extra: { attempts: number; interrupted?: boolean }): BuiltStep {
  const callsAllowed = extra.interrupted !== true && (result.finish === "tool-calls" || result.finish === "stop");
  const content: JSONObject[] = [];
  const replay: Record<string, ReplayMetadata> = {};
  const argsRaw: Record<string, string> = {};
  const dropped: JSONObject[] = [];
  const invalidArgs: string[] = [];
  const calls: PendingCall[] = [];
  for (const part of result.parts) {
    const index = String(content.length);
    switch (part.type) {
      case "text":
      case "reasoning":
        if (part.text === "" && part.replay == null) continue;
        content.push({ type: part.type, text: part.text });
        break;
      case "tool-call": {
        if (!callsAllowed || part.incomplete === true) {
          dropped.push({ tool_call_id: part.tool_call_id, tool_name: part.tool_name, args_bytes: Buffer.byteLength(part.args),
            reason: part.incomplete === true ? "incomplete_arguments" : `step_finished_${extra.interrupted === true ? "interrupted" : result.finish}` });
          continue;
        }
        const parsed = parseToolArgs(part.args);
        if (parsed.ok && Buffer.byteLength(part.args) <= MAX_RAW_ARGS_BYTES) argsRaw[index] = part.args;
        if (!parsed.ok) invalidArgs.push(part.tool_call_id);
        content.push({
          type: "tool-call", tool_call_id: part.tool_call_id, tool_name: part.tool_name,
          args: parsed.ok ? parsed.value : {}, provider_executed: part.provider_executed === true,
        });
        // An invalid argument text is still answered (with an error the model can act on), so it stays a call;
        // the loop sees the raw text and reports it.
        if (part.provider_executed !== true) calls.push({ tool_call_id: part.tool_call_id, tool_name: part.tool_name, args: part.args });
        break;
      }
      case "tool-result":
        content.push({ type: "tool-result", tool_call_id: part.tool_call_id, tool_name: part.tool_name, result: part.result,
          is_error: part.is_error, provider_executed: part.provider_executed === true });
        break;
    }
    if (part.replay != null && Object.keys(part.replay).length > 0) replay[index] = part.replay;
  }
  const finish: JSONObject = {
    reason: extra.interrupted === true ? "interrupted" : result.finish,
    provider: result.provider,
    model: result.model,
    attempts: extra.attempts,
    continue: result.pauseTurn,
  };
  if (result.rawFinishReason != null) finish.raw = result.rawFinishReason;
  if (result.responseId != null) finish.response_id = result.responseId;
  if (result.error != null) {
    finish.error = { kind: result.error.kind, retryable: result.error.retryable, message: result.error.message,
      ...(result.error.status != null ? { status: result.error.status } : {}) };
  }
  if (dropped.length > 0) finish.dropped_tool_calls = dropped;
  if (invalidArgs.length > 0) finish.invalid_tool_arguments = invalidArgs;
  if (result.warnings.length > 0) finish.warnings = result.warnings as unknown as JSONObject[];
  if (result.toolSchemaRewrites.length > 0) finish.tool_schema_rewrites = result.toolSchemaRewrites as unknown as JSONObject[];
  const providerMetadata: JSONObject = {};
  if (Object.keys(replay).length > 0) providerMetadata.parts = replay;
  if (Object.keys(argsRaw).length > 0) providerMetadata.args_raw = argsRaw;
  if (result.finishMetadata != null) providerMetadata.finish = result.finishMetadata;
  return {
    message: {
      role: "assistant",
      content,
      // An error before any output leaves nothing for the model; the row still records what happened.
      visibility: content.length > 0 ? "both" : "user",
      usage: result.usage,
      internals: { provider_metadata: providerMetadata, finish },
    },
    calls,
    empty: content.length === 0,
  };
}
