// The finalizer rules: what an assistant batch means for the governing structured request.
// Pure: the worker feeds it the step's tool calls and finish reason and commits what it decides, in the same
// transaction as the step (candidate or rejection), so no restart can change the verdict.

import { rebaseLocalRefs } from "./local-ref.ts";
import { VALUE_INPUT_MAX_BYTES, VALUE_MAX_DEPTH, VALUE_MAX_NODES } from "./caps.ts";
import { canonicalJson, sha256Hex } from "./canonical.ts";
import type { CompiledSchema } from "./compile.ts";
import { formatFeedback, type ValueError } from "./feedback.ts";
import { parseJsonSafe, type JsonValue } from "./json-boundary.ts";
import { validateParsed } from "./validate.ts";

export const FINALIZER_TOOL_NAME = "coder_structured_output";
/** Starts the text of chatd's model-only control rows, so they read as chatd speaking, not the user. */
export const CONTROL_PREFIX = "[chatd] ";
/** The whole argument text, as sent (the value's stored size is capped after parsing, validate.ts). */
export const FINALIZER_ARGS_MAX_BYTES = VALUE_INPUT_MAX_BYTES;
/** The wrapper `{"output": ...}` adds one level and one node around a value at its caps. */
const WRAPPER_LIMITS = { maxBytes: FINALIZER_ARGS_MAX_BYTES, maxDepth: VALUE_MAX_DEPTH + 1, maxNodes: VALUE_MAX_NODES + 1 };

/** Depth and node errors in the value's terms: the model sees the value's caps, not the wrapper's. */
function valueCapMessage(rule: string, message: string): string {
  if (rule === "max-depth") return `nesting deeper than ${VALUE_MAX_DEPTH}`;
  if (rule === "max-nodes") return `more than ${VALUE_MAX_NODES} nodes`;
  return message;
}

export const FINALIZER_DESCRIPTION =
  "Submit the final answer of this request as {\"output\": <value>}, where the value matches the schema. " +
  "Call it alone, once, after any other tools you need. The server validates it; on errors, fix them and call it again.";

/**
 * The finalizer's input schema: the caller's schema as `output`, unmodified except that its local
 * references are prefixed with `/properties/output` so they name the same schemas inside the wrapper.
 */
export function finalizerInputSchema(callerSchema: Record<string, unknown>): Record<string, unknown> {
  return { type: "object", properties: { output: rebaseLocalRefs(callerSchema, "/properties/output") }, required: ["output"], additionalProperties: false };
}

export interface BatchCall {
  toolCallId: string;
  toolName: string;
  /** Raw argument text exactly as streamed. */
  args: string;
  incomplete: boolean;
  providerExecuted: boolean;
}

export interface BatchView {
  /** Unified finish reason of the step. */
  finish: "stop" | "length" | "content-filter" | "tool-calls" | "error" | "interrupted" | "other";
  calls: BatchCall[];
  /** Anthropic pause_turn: server tools paused mid-turn; not an attempt to answer. */
  pauseTurn?: boolean;
}

export type RejectionReason =
  | "text_only"
  | "truncated"
  | "invalid_arguments"
  | "invalid_value"
  | "invalid_batch"
  | "duplicate_finalizer";

/** Private record of a rejected payload: never the payload itself. */
export interface ScreeningRecord {
  tool_call_id: string;
  reason: RejectionReason;
  rule?: string;
  pointer?: string;
  bytes: number;
  sha256: string;
}

export type BatchVerdict =
  /** No finalizer involvement (ordinary tool step): nothing is counted. */
  | { kind: "ordinary" }
  /** A refusal or content filter: the request fails at once with `refused`. */
  | { kind: "refused" }
  | { kind: "candidate"; toolCallId: string; value: JsonValue; canonicalText: string }
  | {
      kind: "rejected";
      reason: RejectionReason;
      /** A finalizer value failed screening or validation (decides validation_exhausted vs not_produced). */
      valueRejected: boolean;
      /** Tool results to record for the batch's calls (finalizer feedback, `skipped` for siblings). */
      results: { toolCallId: string; toolName: string; result: { error: string; errors?: ValueError[] } }[];
      /** Replacement argument text for finalizer calls whose raw bytes must not be persisted. */
      placeholders: Map<string, string>;
      screening: ScreeningRecord[];
      /** Bounded instruction for the model's next attempt (also in the finalizer's tool result). */
      feedback: string;
    };

const SKIPPED = "skipped: the structured output finalizer must be called alone; call it again by itself";

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** A placeholder that stays valid JSON and can never be mistaken for a value on replay. */
export function rejectedPlaceholder(rule: string): string {
  return JSON.stringify({ chatd_rejected_arguments: rule });
}

function record(call: BatchCall, reason: RejectionReason, rule?: string, pointer?: string): ScreeningRecord {
  return { tool_call_id: call.toolCallId, reason, rule, pointer, bytes: byteLength(call.args), sha256: sha256Hex(call.args) };
}

interface ScreenedArgs {
  ok: boolean;
  value?: JsonValue;
  errors: ValueError[];
  rule?: string;
  pointer?: string;
  /** The raw text failed the safety boundary and must be replaced before persistence. */
  unsafe: boolean;
}

/** Screens the raw argument bytes of one finalizer call, then validates `output` against the caller's schema. */
export function screenFinalizerArguments(args: string, validator: CompiledSchema): ScreenedArgs {
  if (byteLength(args) > FINALIZER_ARGS_MAX_BYTES) {
    return { ok: false, unsafe: true, rule: "max-bytes", pointer: "", errors: [{ pointer: "", message: `arguments larger than ${FINALIZER_ARGS_MAX_BYTES} bytes` }] };
  }
  const parsed = parseJsonSafe(args, WRAPPER_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    const inner = pointer.startsWith("/output") ? pointer.slice("/output".length) : pointer;
    return { ok: false, unsafe: true, rule, pointer, errors: [{ pointer: inner, message: `${rule}: ${valueCapMessage(rule, message)}` }] };
  }
  const wrapper = parsed.value;
  if (!(wrapper instanceof Map) || wrapper.size !== 1 || !wrapper.has("output")) {
    return { ok: false, unsafe: false, rule: "wrapper", errors: [{ pointer: "", message: 'arguments must be exactly {"output": <value>}' }] };
  }
  const validated = validateParsed(validator, wrapper.get("output") as JsonValue);
  if (!validated.ok) return { ok: false, unsafe: false, rule: validated.rule ?? "schema", errors: validated.errors };
  return { ok: true, unsafe: false, value: validated.value, errors: [] };
}

function rejection(reason: RejectionReason, message: string, calls: BatchCall[], finalizerErrors: ValueError[] = [],
  extra: { valueRejected?: boolean; placeholders?: Map<string, string>; screening?: ScreeningRecord[] } = {}): BatchVerdict {
  const feedback = formatFeedback(finalizerErrors) ? `${message}\n${formatFeedback(finalizerErrors)}` : message;
  const results = calls
    .filter((call) => !call.providerExecuted)
    .map((call) => ({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      result: call.toolName === FINALIZER_TOOL_NAME
        ? { error: message, ...(finalizerErrors.length > 0 ? { errors: finalizerErrors } : {}) }
        : { error: SKIPPED },
    }));
  return {
    kind: "rejected", reason, results, feedback,
    valueRejected: extra.valueRejected ?? false,
    placeholders: extra.placeholders ?? new Map(),
    screening: extra.screening ?? calls.filter((c) => c.toolName === FINALIZER_TOOL_NAME).map((c) => record(c, reason)),
  };
}

/**
 * Judges one assistant batch of a turn that governs a pending structured request. Steps that end interrupted or
 * in error never reach here (the loop finishes or retries them) and can never produce a candidate.
 */
export function judgeBatch(batch: BatchView, validator: CompiledSchema): BatchVerdict {
  if (batch.finish === "content-filter") return { kind: "refused" };
  const finalizers = batch.calls.filter((call) => call.toolName === FINALIZER_TOOL_NAME);
  const complete = batch.finish === "stop" || batch.finish === "tool-calls";
  if (!complete) {
    // Truncation (length, other): partial arguments may parse, but only a complete call can produce a candidate.
    if (finalizers.length > 0) {
      const placeholders = new Map(finalizers.map((call) => [call.toolCallId, rejectedPlaceholder("truncated")]));
      return rejection("truncated", "the finalizer call was cut off before its arguments were complete; call it again",
        batch.calls, [], { valueRejected: true, placeholders });
    }
    if (batch.calls.length === 0) return rejection("text_only", "the structured output was not submitted; call coder_structured_output", []);
    return { kind: "ordinary" };
  }
  if (finalizers.length === 0) {
    if (batch.calls.length > 0 || batch.pauseTurn) return { kind: "ordinary" };
    return rejection("text_only", "a text answer does not finish this request; submit it by calling coder_structured_output", []);
  }
  if (finalizers.length > 1) {
    return rejection("duplicate_finalizer", "coder_structured_output was called more than once; call it exactly once", batch.calls,
      [], { placeholders: new Map(finalizers.map((call) => [call.toolCallId, rejectedPlaceholder("duplicate_finalizer")])) });
  }
  if (batch.calls.length > 1) {
    // Provider-executed siblings may already have run upstream; the candidate is rejected all the same.
    return rejection("invalid_batch", "coder_structured_output must be called alone, without other tool calls", batch.calls,
      [], { placeholders: new Map(finalizers.map((call) => [call.toolCallId, rejectedPlaceholder("invalid_batch")])) });
  }
  const call = finalizers[0]!;
  if (call.incomplete) {
    return rejection("truncated", "the finalizer call's arguments were incomplete; call it again", batch.calls, [],
      { valueRejected: true, placeholders: new Map([[call.toolCallId, rejectedPlaceholder("truncated")]]) });
  }
  const screened = screenFinalizerArguments(call.args, validator);
  if (screened.ok) {
    return { kind: "candidate", toolCallId: call.toolCallId, value: screened.value!, canonicalText: canonicalJson(screened.value!) };
  }
  const reason: RejectionReason = screened.unsafe || screened.rule === "wrapper" ? "invalid_arguments" : "invalid_value";
  return rejection(reason, "the submitted value was rejected; fix these errors and call coder_structured_output again",
    batch.calls, screened.errors, {
      valueRejected: true,
      placeholders: screened.unsafe ? new Map([[call.toolCallId, rejectedPlaceholder(screened.rule ?? "unsafe")]]) : new Map(),
      screening: [record(call, reason, screened.rule, screened.pointer)],
    });
}

export type FailureCode = "not_produced" | "validation_exhausted";

/** After a rejection: the first attempt plus `repairs` repairs; the next rejection past that fails the request. */
export function budgetExhausted(rejectedBatches: number, repairs: number): boolean {
  return rejectedBatches > repairs;
}

/** The failure code when the budget or the step limit ends a request without a candidate. */
export function exhaustionCode(valueRejected: boolean): FailureCode {
  return valueRejected ? "validation_exhausted" : "not_produced";
}
