// Folds LanguageModelV4 stream parts into chatd's ordered step parts and emits the
// coalescable deltas. Pure bookkeeping: no I/O, no error policy.
import type { LanguageModelV4StreamPart, SharedV4ProviderMetadata } from "@ai-sdk/provider";
import type {
  AssistantPart,
  FinishReason,
  JSONObject,
  ReasoningPart,
  ReplayMetadata,
  StepEvent,
  StepUsage,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from "./types.ts";

/**
 * Merge metadata per provider key. A later value wins unless it is null/undefined, so the
 * encrypted content that OpenAI sends on `reasoning-end` (and Anthropic's signature on a
 * trailing empty delta) is kept while a later bare `{itemId}` does not erase it.
 */
export function mergeReplay(
  target: ReplayMetadata | undefined,
  meta: SharedV4ProviderMetadata | undefined,
): ReplayMetadata | undefined {
  if (meta == null) return target;
  const out: ReplayMetadata = { ...target };
  for (const [provider, values] of Object.entries(meta)) {
    const merged: JSONObject = { ...out[provider] };
    for (const [key, value] of Object.entries(values)) {
      if (value != null || !(key in merged)) merged[key] = value;
    }
    out[provider] = merged;
  }
  return out;
}

export class StepAccumulator {
  readonly parts: AssistantPart[] = [];
  finish?: { unified: FinishReason; raw?: string };
  usage: StepUsage = {};
  responseId?: string;
  finishMetadata?: ReplayMetadata;
  /** In-stream `error` parts (the stream may continue after them). */
  readonly streamErrors: unknown[] = [];
  /** Tool calls whose final `tool-call` part arrived. */
  private readonly completedCalls = new Set<string>();
  private readonly textIndex = new Map<string, number>();
  private readonly reasoningIndex = new Map<string, number>();
  private readonly toolIndex = new Map<string, number>();
  private readonly emit: (event: StepEvent) => void;

  constructor(emit: (event: StepEvent) => void) {
    this.emit = emit;
  }

  /**
   * Text and reasoning parts are created lazily: an empty block (OpenAI's first chunk is
   * `content: ""`) becomes a part only if it ever gets text or replay metadata (Anthropic
   * redacted thinking has metadata and no text).
   */
  private readonly pendingReplay = new Map<string, ReplayMetadata | undefined>();

  private existingText(id: string, kind: "text" | "reasoning"): { index: number; part: TextPart | ReasoningPart } | undefined {
    const index = (kind === "text" ? this.textIndex : this.reasoningIndex).get(id);
    return index == null ? undefined : { index, part: this.parts[index] as TextPart | ReasoningPart };
  }

  private textPart(id: string, kind: "text" | "reasoning"): { index: number; part: TextPart | ReasoningPart } {
    const existing = this.existingText(id, kind);
    if (existing != null) return existing;
    const key = `${kind}:${id}`;
    const replay = this.pendingReplay.get(key);
    this.pendingReplay.delete(key);
    const part: TextPart | ReasoningPart = { type: kind, text: "" };
    if (replay != null) part.replay = replay;
    const index = this.parts.push(part) - 1;
    (kind === "text" ? this.textIndex : this.reasoningIndex).set(id, index);
    return { index, part };
  }

  /** Metadata for a block: merged into its part, or held until the part exists. */
  private blockMetadata(id: string, kind: "text" | "reasoning", meta: SharedV4ProviderMetadata | undefined, create: boolean): void {
    const existing = this.existingText(id, kind);
    if (existing != null) {
      this.setReplay(existing.part, meta);
      return;
    }
    const key = `${kind}:${id}`;
    const merged = mergeReplay(this.pendingReplay.get(key), meta);
    this.pendingReplay.set(key, merged);
    if (create && merged != null && Object.values(merged).some((v) => Object.keys(v).length > 0)) {
      this.textPart(id, kind);
    }
  }

  private toolPart(id: string, toolName: string, providerExecuted: boolean): { index: number; part: ToolCallPart } {
    let index = this.toolIndex.get(id);
    if (index == null) {
      const part: ToolCallPart = { type: "tool-call", tool_call_id: id, tool_name: toolName, args: "" };
      if (providerExecuted) part.provider_executed = true;
      index = this.parts.push(part) - 1;
      this.toolIndex.set(id, index);
    }
    return { index, part: this.parts[index] as ToolCallPart };
  }

  private setReplay(part: AssistantPart, meta: SharedV4ProviderMetadata | undefined): void {
    const merged = mergeReplay(part.replay, meta);
    if (merged != null) part.replay = merged;
  }

  accept(p: LanguageModelV4StreamPart): void {
    switch (p.type) {
      case "response-metadata":
        if (p.id != null) this.responseId = p.id;
        break;
      case "text-start":
      case "reasoning-start":
        // Metadata at the start alone creates a reasoning part (redacted thinking), not a text part.
        this.blockMetadata(p.id, p.type === "text-start" ? "text" : "reasoning", p.providerMetadata, p.type === "reasoning-start");
        break;
      case "text-end":
      case "reasoning-end":
        this.blockMetadata(p.id, p.type === "text-end" ? "text" : "reasoning", p.providerMetadata, p.type === "reasoning-end");
        break;
      case "text-delta":
      case "reasoning-delta": {
        const kind = p.type === "text-delta" ? "text" : "reasoning";
        if (p.delta.length === 0) {
          // Anthropic sends the thinking signature on an empty delta.
          this.blockMetadata(p.id, kind, p.providerMetadata, kind === "reasoning");
          break;
        }
        const { index, part } = this.textPart(p.id, kind);
        this.setReplay(part, p.providerMetadata);
        part.text += p.delta;
        this.emit({ type: kind === "text" ? "text-delta" : "reasoning-delta", partIndex: index, delta: p.delta });
        break;
      }
      case "tool-input-start": {
        const { index, part } = this.toolPart(p.id, p.toolName, p.providerExecuted === true);
        this.setReplay(part, p.providerMetadata);
        this.emit({
          type: "tool-input-start",
          partIndex: index,
          toolCallId: p.id,
          toolName: p.toolName,
          providerExecuted: p.providerExecuted === true,
        });
        break;
      }
      case "tool-input-delta": {
        const index = this.toolIndex.get(p.id);
        if (index == null) break; // a delta without a start names no tool; the final tool-call carries the text
        const part = this.parts[index] as ToolCallPart;
        part.args += p.delta;
        this.emit({ type: "tool-input-delta", partIndex: index, toolCallId: p.id, delta: p.delta });
        break;
      }
      case "tool-input-end": {
        const index = this.toolIndex.get(p.id);
        if (index != null) this.setReplay(this.parts[index] as ToolCallPart, p.providerMetadata);
        break;
      }
      case "tool-call": {
        const { part } = this.toolPart(p.toolCallId, p.toolName, p.providerExecuted === true);
        // The final input is authoritative: it is the exact text the package assembled
        // (Responses: `output_item.done.arguments`; Anthropic: '' becomes '{}').
        part.args = p.input;
        this.setReplay(part, p.providerMetadata);
        this.completedCalls.add(p.toolCallId);
        break;
      }
      case "tool-result": {
        if (p.preliminary === true) break; // only the final result of a provider tool is recorded
        const result: ToolResultPart = {
          type: "tool-result",
          tool_call_id: p.toolCallId,
          tool_name: p.toolName,
          result: p.result,
          is_error: p.isError === true,
          provider_executed: true,
        };
        const merged = mergeReplay(undefined, p.providerMetadata);
        if (merged != null) result.replay = merged;
        this.parts.push(result);
        break;
      }
      case "finish":
        this.finish = { unified: p.finishReason.unified, ...(p.finishReason.raw != null ? { raw: p.finishReason.raw } : {}) };
        this.usage = {
          ...(p.usage.inputTokens.total != null ? { inputTokens: p.usage.inputTokens.total } : {}),
          ...(p.usage.outputTokens.total != null ? { outputTokens: p.usage.outputTokens.total } : {}),
          ...(p.usage.outputTokens.reasoning != null ? { reasoningTokens: p.usage.outputTokens.reasoning } : {}),
          ...(p.usage.inputTokens.cacheRead != null ? { cacheReadTokens: p.usage.inputTokens.cacheRead } : {}),
          ...(p.usage.inputTokens.cacheWrite != null ? { cacheWriteTokens: p.usage.inputTokens.cacheWrite } : {}),
        };
        if (p.providerMetadata != null) this.finishMetadata = mergeReplay(undefined, p.providerMetadata);
        break;
      case "error":
        this.streamErrors.push(p.error);
        break;
      default:
        // stream-start is handled by the caller; ping, raw, custom, sources, files and
        // approval requests carry nothing chatd stores in a step.
        break;
    }
  }

  /**
   * Marks client tool calls whose arguments may be cut short. On a finish that is not a
   * complete tool batch (length, interruption, error) every client call is incomplete even
   * when its partial text parses (such a step cannot produce a candidate).
   */
  markIncomplete(finish: FinishReason): void {
    const truncated = finish === "length" || finish === "interrupted" || finish === "error";
    for (const part of this.parts) {
      if (part.type !== "tool-call") continue;
      const done = this.completedCalls.has(part.tool_call_id);
      if (!done || (truncated && part.provider_executed !== true)) part.incomplete = true;
    }
  }
}
