// The structured-output runtime inside the loop: offer coder_structured_output for the
// governing request only, judge every assistant batch with src/structured/finalizer.ts, and turn the verdict into
// the rows and progress that commit_step records in the same transaction as the step. Success itself is
// finish_turn with no outcome: SQL takes the value from the durable candidate record, never from here.
import { cachedValidator, compileSchema, parseJsonSafe, SCHEMA_LIMITS, type CompiledSchema } from "../../src/structured/index.ts";
import {
  budgetExhausted, CONTROL_PREFIX, exhaustionCode, FINALIZER_ARGS_MAX_BYTES, FINALIZER_DESCRIPTION, FINALIZER_TOOL_NAME,
  finalizerInputSchema, judgeBatch, type BatchVerdict,
} from "../../src/structured/finalizer.ts";
import type { JSONObject, StepEvent, StepResult, ToolSpec } from "../../src/providers/index.ts";
import type { BuiltStep, FailedOutcome, StructuredState } from "./types.ts";

export type Governing =
  | { ok: true; validator: CompiledSchema; tool: ToolSpec }
  | { ok: false; outcome: FailedOutcome };

const configurationError = (message: string): { ok: false; outcome: FailedOutcome } =>
  ({ ok: false, outcome: { status: "failed", code: "configuration_error", message } });

/** The finalizer tool of each stored schema text this process compiled, with the hash of its validator: every step
 * of a structured turn (and every turn with the same schema) parsed, canonicalised and hashed the same text again,
 * 6.5% of the worker's samples (`perf record` of the worker under `node bench/e2e.ts`, node --perf-basic-prof). The
 * validator stays with the compile cache (looked up by the hash, which keeps it recent there); a text whose
 * validator was evicted is compiled again. Tools are shared between steps and turns, so they are frozen. */
const offered = new Map<string, { sha256: string; tool: ToolSpec }>();
const OFFERED_MAX = 64;

type Offered = Extract<Governing, { ok: true }>;

function offeredBefore(schemaText: string): Offered | undefined {
  const hit = offered.get(schemaText);
  if (hit === undefined) return undefined;
  offered.delete(schemaText);
  const validator = cachedValidator(hit.sha256);
  if (validator === undefined) return undefined;
  offered.set(schemaText, hit);
  return { ok: true, validator, tool: hit.tool };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * The worker re-validates every persisted schema before use (a raw SQL caller got only the envelope checks, and
 * jsonb cannot show duplicate keys after the fact): once per text in this process, as the result depends on the
 * text alone.
 */
function offer(schemaText: string): Governing {
  const known = offeredBefore(schemaText);
  if (known !== undefined) return known;
  // The schema caps, not parseJsonSafe's default (the value caps: a schema nested 65 to 128 JSON levels deep passed
  // admission and then failed here).
  const parsed = parseJsonSafe(schemaText, { ...SCHEMA_LIMITS, maxBytes: 1024 * 1024 });
  if (!parsed.ok) return configurationError(`the stored schema no longer passes validation (${parsed.error.rule})`);
  const compiled = compileSchema(parsed.value);
  if (!compiled.ok) {
    const first = compiled.errors[0];
    return configurationError(`the stored schema no longer passes validation${first ? ` (at "${first.field}": ${first.detail.slice(0, 200)})` : ""}`);
  }
  // The schema the provider sees is a hint (a package may rewrite it); the server validates against the original.
  const hint = JSON.parse(schemaText) as Record<string, unknown>;
  const tool: ToolSpec = deepFreeze({ name: FINALIZER_TOOL_NAME, description: FINALIZER_DESCRIPTION,
    inputSchema: finalizerInputSchema(hint) as JSONObject, strict: false });
  offered.set(schemaText, { sha256: compiled.validator.sha256, tool });
  if (offered.size > OFFERED_MAX) offered.delete(offered.keys().next().value!);
  return { ok: true, validator: compiled.validator, tool };
}

/** The governing request's validator and finalizer tool; name collisions and strict tools are refused before any
 * provider call. */
export function governingRequest(state: StructuredState, otherTools: string[], strict: { enabled: boolean; perTool: boolean }): Governing {
  const governing = offer(state.schemaText);
  if (!governing.ok) return governing;
  if (otherTools.includes(FINALIZER_TOOL_NAME)) {
    return configurationError(`another tool is named ${FINALIZER_TOOL_NAME}, which is reserved for the finalizer`);
  }
  if (strict.enabled && !strict.perTool) {
    return configurationError("the model configuration turns strict tools on and this provider cannot turn it off for the finalizer alone");
  }
  return governing;
}

/** Watches the finalizer's argument bytes while they stream, so an oversized payload is cut off early. */
export class FinalizerByteCap {
  private readonly sizes = new Map<string, number>();
  private readonly finalizerCalls = new Set<string>();
  private readonly abort: () => void;
  exceeded = false;
  constructor(abort: () => void) {
    this.abort = abort;
  }
  accept(event: StepEvent): void {
    if (event.type === "tool-input-start" && event.toolName === FINALIZER_TOOL_NAME) this.finalizerCalls.add(event.toolCallId);
    if (event.type !== "tool-input-delta" || !this.finalizerCalls.has(event.toolCallId)) return;
    const size = (this.sizes.get(event.toolCallId) ?? 0) + Buffer.byteLength(event.delta, "utf8");
    this.sizes.set(event.toolCallId, size);
    if (size > FINALIZER_ARGS_MAX_BYTES && !this.exceeded) {
      this.exceeded = true;
      this.abort();
    }
  }
}

export function judgeStep(result: StepResult, validator: CompiledSchema): BatchVerdict {
  return judgeBatch({
    finish: result.finish,
    pauseTurn: result.pauseTurn,
    calls: result.parts.flatMap((part) => part.type !== "tool-call" ? [] : [{
      toolCallId: part.tool_call_id, toolName: part.tool_name, args: part.args,
      incomplete: part.incomplete === true, providerExecuted: part.provider_executed === true,
    }]),
  }, validator);
}

/** JSON text of a commit where some values must keep their exact number text (never a round trip through float64). */
export class ExactJson {
  private readonly exact = new Map<string, string>();
  private counter = 0;
  /** A stand-in that JSON.stringify emits as a unique string, replaced by `text` in `stringify`. */
  placeholder(text: string): string {
    const marker = `\u0000chatd-exact-${this.counter++}`;
    this.exact.set(JSON.stringify(marker), text);
    return marker;
  }
  stringify(value: unknown): string {
    let json = JSON.stringify(value);
    for (const [marker, text] of this.exact) json = json.replace(marker, () => text);
    return json;
  }
}

export interface StructuredCommit {
  /** JSON text of the commit_step messages and progress. */
  messages: string;
  progress: string;
  /** What the loop does after the commit. */
  next: { kind: "finish" } | { kind: "fail"; outcome: FailedOutcome } | { kind: "continue" } | { kind: "ordinary" };
}

/**
 * The rows and progress of a step that governs a structured request. `ordinary` leaves the step to the normal
 * tool flow (nothing is counted).
 */
/** messageOffset: rows the commit puts before this step's own (results deferred by the transitions), so that the
 * candidate's message index names the assistant row. */
export function structuredCommit(verdict: BatchVerdict, built: BuiltStep, state: StructuredState, step: number,
  repairs: number, capExceeded: boolean, messageOffset = 0): StructuredCommit {
  const exact = new ExactJson();
  const assistant = built.message as { content: { type: string; tool_call_id?: string; args?: unknown }[]; internals?: Record<string, unknown> };
  const argsRaw = ((assistant.internals?.provider_metadata ?? {}) as { args_raw?: Record<string, string> }).args_raw;
  const callIndex = (id: string) => assistant.content.findIndex((p) => p.type === "tool-call" && p.tool_call_id === id);
  switch (verdict.kind) {
    case "ordinary":
      return { messages: exact.stringify([built.message]), progress: '{"steps":1}', next: { kind: "ordinary" } };
    case "refused":
      return { messages: exact.stringify([built.message]), progress: '{"steps":1}',
        next: { kind: "fail", outcome: { status: "failed", code: "refused", message: "the model refused to produce the structured output" } } };
    case "candidate": {
      const index = callIndex(verdict.toolCallId);
      if (index >= 0) assistant.content[index]!.args = { output: exact.placeholder(verdict.canonicalText) };
      const accepted = { role: "tool", content: [{ type: "tool-result", tool_call_id: verdict.toolCallId, tool_name: FINALIZER_TOOL_NAME,
        result: { accepted: true }, is_error: false, provider_executed: false }] };
      const progress = `{"steps":1,"candidate":{"value":${verdict.canonicalText},"step":${step},"message_index":${messageOffset}}}`;
      return { messages: exact.stringify([built.message, accepted]), progress, next: { kind: "finish" } };
    }
    case "rejected": {
      const kept = new Set(built.calls.map((call) => call.tool_call_id));
      // Unsafe argument bytes never reach the database: the stored call holds a placeholder and its exact text
      // is dropped from the replay metadata; a hash and the rule go to the private screening record.
      for (const [id, placeholder] of verdict.placeholders) {
        const index = callIndex(id);
        if (index < 0) continue;
        assistant.content[index]!.args = JSON.parse(placeholder);
        if (argsRaw) argsRaw[String(index)] = placeholder;
      }
      // A finalizer call the step dropped (cut off) is kept as a call with its placeholder, so the model sees its
      // attempt answered by the error instead of a silent gap.
      for (const [id, placeholder] of verdict.placeholders) {
        if (callIndex(id) >= 0) continue;
        assistant.content.push({ type: "tool-call", tool_call_id: id, tool_name: FINALIZER_TOOL_NAME, args: JSON.parse(placeholder), provider_executed: false } as never);
        (built.message as { visibility?: string }).visibility = "both";
        kept.add(id);
      }
      if (assistant.internals) assistant.internals.finalizer_screening = { reason: verdict.reason, calls: verdict.screening, cap_exceeded: capExceeded };
      const capped = { error: `the finalizer arguments exceeded ${FINALIZER_ARGS_MAX_BYTES} bytes; submit a smaller value` };
      const results = verdict.results.filter((r) => kept.has(r.toolCallId)).map((r) => ({
        type: "tool-result", tool_call_id: r.toolCallId, tool_name: r.toolName,
        result: capExceeded && r.toolName === FINALIZER_TOOL_NAME ? capped : r.result, is_error: true, provider_executed: false,
      }));
      const answersFinalizer = results.some((r) => r.tool_name === FINALIZER_TOOL_NAME);
      const rows: object[] = [built.message];
      if (results.length > 0) rows.push({ role: "tool", content: results });
      // Without a finalizer call to answer (text only, or a cut-off call), the model gets a model-only control row.
      if (!answersFinalizer) {
        rows.push({ role: "user", visibility: "model", kind: "control",
          content: [{ type: "text", text: CONTROL_PREFIX + (capExceeded
            ? `The finalizer arguments exceeded ${FINALIZER_ARGS_MAX_BYTES} bytes. ${verdict.feedback}` : verdict.feedback) }] });
      }
      const progress = JSON.stringify({ steps: 1, rejection: { reason: verdict.reason, value_rejected: verdict.valueRejected } });
      const rejected = state.rejectedBatches + 1;
      const next: StructuredCommit["next"] = budgetExhausted(rejected, repairs)
        ? { kind: "fail", outcome: { status: "failed", code: exhaustionCode(state.valueRejected || verdict.valueRejected) } }
        : { kind: "continue" };
      return { messages: exact.stringify(rows), progress, next };
    }
  }
}

/** A turn that ends without a candidate (the step limit, or a final answer left from an older build). */
export function noCandidateOutcome(state: StructuredState): FailedOutcome {
  return { status: "failed", code: exhaustionCode(state.valueRejected) };
}
