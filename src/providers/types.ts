// chatd's provider-neutral vocabulary. The worker loop speaks only these types; the
// adapters translate them to and from the AI SDK LanguageModelV4 level, so a switch of
// provider package stays inside src/providers.
import type { JSONObject, JSONValue } from "@ai-sdk/provider";

export type { JSONObject, JSONValue };

export type ProviderKind =
  | "openai-responses"
  | "openai-chat"
  | "openai-compatible"
  | "anthropic"
  | "scripted";

export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Anthropic extended thinking. `enabled` needs a budget (>= 1024 tokens, Anthropic's minimum). */
export type ThinkingConfig =
  | { type: "enabled"; budgetTokens: number }
  | { type: "adaptive" }
  | { type: "disabled" };

/** A provider-executed tool (web search, code execution, ...), passed through to the package. */
export interface ProviderToolConfig {
  /** Package tool id, e.g. `anthropic.web_search_20250305` or `openai.web_search`. */
  id: `${string}.${string}`;
  name: string;
  args: Record<string, unknown>;
}

export interface ModelOptions {
  maxOutputTokens?: number;
  temperature?: number;
  /** Anthropic only: extended thinking. */
  thinking?: ThinkingConfig;
  /** OpenAI reasoning models (`reasoningEffort`), Anthropic `effort`, compatible servers `reasoning_effort`. */
  reasoningEffort?: ReasoningEffort;
  /** OpenAI Responses only: reasoning summaries streamed as reasoning text. */
  reasoningSummary?: "auto" | "concise" | "detailed";
  /** Default strictness of function tools; a ToolSpec's own `strict` wins. Undefined = not sent. */
  strictTools?: boolean;
  /** Anthropic only: `eager_input_streaming` (package default true; partial JSON possible). */
  toolStreaming?: boolean;
  providerTools?: ProviderToolConfig[];
}

export interface ModelConfig {
  provider: ProviderKind;
  model: string;
  /** Base URL including `/v1` (OpenAI, Anthropic, compatible servers). */
  baseUrl?: string;
  /** Secret. Never logged, never copied into errors or results. */
  apiKey?: string;
  contextLimit: number;
  options: ModelOptions;
}

/**
 * Provider replay metadata, keyed by provider options name (`anthropic`, `openai`, or the
 * compatible provider's name): Anthropic thinking signatures / redacted data, OpenAI
 * reasoning item ids and encrypted content, Responses item ids. Stored privately
 * (chat_private.message_internals) and handed back unchanged on the next step.
 */
export type ReplayMetadata = Record<string, JSONObject>;

export interface TextPart {
  type: "text";
  text: string;
  replay?: ReplayMetadata;
}

export interface ReasoningPart {
  type: "reasoning";
  text: string;
  replay?: ReplayMetadata;
}

export interface ToolCallPart {
  type: "tool-call";
  tool_call_id: string;
  tool_name: string;
  /** The exact argument text as received from the provider (may be invalid JSON). */
  args: string;
  provider_executed?: boolean;
  /** Set on step results: the argument stream did not complete (truncation, abort). */
  incomplete?: boolean;
  replay?: ReplayMetadata;
}

export interface ToolResultPart {
  type: "tool-result";
  tool_call_id: string;
  tool_name: string;
  result: JSONValue;
  is_error: boolean;
  provider_executed?: boolean;
  replay?: ReplayMetadata;
}

export type AssistantPart = TextPart | ReasoningPart | ToolCallPart | ToolResultPart;

export type ChatMessage =
  | { role: "system"; content: TextPart[] }
  | { role: "user"; content: TextPart[] }
  | { role: "assistant"; content: AssistantPart[] }
  | { role: "tool"; content: ToolResultPart[] };

export type ChatPrompt = ChatMessage[];

export interface ToolSpec {
  name: string;
  description?: string;
  /** A JSON Schema object, sent as the tool's input schema. */
  inputSchema: JSONObject;
  /** Overrides `options.strictTools` for this tool (the finalizer is always `false`). */
  strict?: boolean;
}

export type ToolChoice = "auto" | "none" | "required" | { tool: string };

export type FinishReason =
  | "stop"
  | "length"
  | "content-filter"
  | "tool-calls"
  | "error"
  | "interrupted"
  | "other";

export interface StepUsage {
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** A provider warning in neutral form (details are package text, never provider bodies). */
export interface ProviderWarning {
  type: "unsupported" | "compatibility" | "deprecated" | "other";
  feature?: string;
  details?: string;
}

export interface ClassifiedError {
  retryable: boolean;
  /** e.g. rate_limit, overloaded, server_error, timeout, network, auth, bad_request, configuration_error, aborted, unknown */
  kind: string;
  status?: number;
  /** Sanitized: status and kind only. */
  message: string;
}

export interface ToolSchemaRewrite {
  /** Tool name, or `*` when the package does not say which tool. */
  tool: string;
  detail: string;
}

export interface StepResult {
  provider: ProviderKind;
  model: string;
  /** In stream order; a part is placed where it started. */
  parts: AssistantPart[];
  finish: FinishReason;
  /** The provider's own finish value (`tool_use`, `max_output_tokens`, `pause_turn`, ...). */
  rawFinishReason?: string;
  /** Anthropic `pause_turn` (server tools paused): unified `stop`, but the turn must continue. */
  pauseTurn: boolean;
  usage: StepUsage;
  warnings: ProviderWarning[];
  toolSchemaRewrites: ToolSchemaRewrite[];
  /** Set when finish is `error`: provider failure or configuration_error. */
  error?: ClassifiedError;
  responseId?: string;
  /** Provider metadata attached to the finish event (private, like part replay metadata). */
  finishMetadata?: ReplayMetadata;
}

export type StepEvent =
  | { type: "text-delta"; partIndex: number; delta: string }
  | { type: "reasoning-delta"; partIndex: number; delta: string }
  | {
      type: "tool-input-start";
      partIndex: number;
      toolCallId: string;
      toolName: string;
      providerExecuted: boolean;
    }
  | { type: "tool-input-delta"; partIndex: number; toolCallId: string; delta: string }
  | { type: "warnings"; warnings: ProviderWarning[] };

export interface StepRequest {
  prompt: ChatPrompt;
  tools: ToolSpec[];
  /** Default `auto` (tool choice stays automatic). */
  toolChoice?: ToolChoice;
  abortSignal?: AbortSignal;
  /** Synchronous; may call the step's abort (e.g. a byte cap on tool arguments). */
  onEvent?: (event: StepEvent) => void;
}
