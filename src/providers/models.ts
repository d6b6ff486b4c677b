// ModelConfig → a LanguageModelV4 instance and the provider-specific call options.
// This is the only module that knows provider option names and the per-provider quirks
// (strict tool schemas, thinking, store:false).
import { createAnthropic } from "@ai-sdk/anthropic";
import { getAnthropicLanguageModelEntry } from "@ai-sdk/anthropic/internal";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { JSONObject, LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { FetchFunction } from "@ai-sdk/provider-utils";
import { scriptedModel } from "./scripted/model.ts";
import type { ModelConfig, ToolChoice, ToolSpec } from "./types.ts";

/** The providerOptions / providerMetadata key of the openai-compatible provider. */
const COMPATIBLE_NAME = "compatible";

export interface ModelRuntime {
  /** Replaces global fetch (tests, auditing raw bytes). */
  fetch?: FetchFunction;
}

export function createLanguageModel(config: ModelConfig, runtime: ModelRuntime = {}): LanguageModelV4 {
  const common = {
    ...(config.baseUrl != null ? { baseURL: config.baseUrl } : {}),
    ...(config.apiKey != null ? { apiKey: config.apiKey } : {}),
    ...(runtime.fetch != null ? { fetch: runtime.fetch } : {}),
  };
  switch (config.provider) {
    case "openai-responses":
      return createOpenAI(common).responses(config.model);
    case "openai-chat":
      return createOpenAI(common).chat(config.model);
    case "openai-compatible":
      if (config.baseUrl == null) throw new Error("openai-compatible needs a baseUrl");
      return createOpenAICompatible({
        name: COMPATIBLE_NAME,
        baseURL: config.baseUrl,
        ...(config.apiKey != null ? { apiKey: config.apiKey } : {}),
        ...(runtime.fetch != null ? { fetch: runtime.fetch } : {}),
        includeUsage: true,
      }).chatModel(config.model);
    case "anthropic":
      return createAnthropic(common)(config.model);
    case "scripted":
      return scriptedModel(config.model);
  }
}

export interface ProviderCapabilities {
  /** The request can carry a `strict` flag per function tool (true, false or omitted). */
  strictPerTool: boolean;
  /** Reasoning/thinking output that must be replayed with metadata. */
  reasoningReplay: boolean;
  /** Forced tool choice is honoured (false: the package downgrades it to auto). */
  forcedToolChoice: boolean;
}

/**
 * What a configuration can do, known locally before any request (a finalizer
 * that cannot be sent non-strict while other tools are strict is a configuration_error
 * detected at admission).
 */
export function providerCapabilities(config: ModelConfig): ProviderCapabilities {
  switch (config.provider) {
    case "openai-responses":
    case "openai-chat":
      return { strictPerTool: true, reasoningReplay: config.provider === "openai-responses", forcedToolChoice: true };
    case "openai-compatible":
      // The flag is forwarded per tool; whether the server enforces it is server-specific.
      return { strictPerTool: true, reasoningReplay: false, forcedToolChoice: true };
    case "anthropic": {
      const language = getAnthropicLanguageModelEntry(config.model).capabilities.language;
      const thinkingEnabled = config.options.thinking?.type === "enabled";
      return {
        // The package drops `strict` (with a warning) on models without native structured output.
        strictPerTool: language.structuredOutput.native,
        reasoningReplay: true,
        forcedToolChoice: language.tools.forcedChoice && !thinkingEnabled,
      };
    }
    case "scripted":
      return { strictPerTool: true, reasoningReplay: false, forcedToolChoice: true };
  }
}

function v4ToolChoice(choice: ToolChoice): LanguageModelV4CallOptions["toolChoice"] {
  if (typeof choice === "object") return { type: "tool", toolName: choice.tool };
  return { type: choice };
}

function providerOptions(config: ModelConfig): Record<string, JSONObject> {
  const o = config.options;
  switch (config.provider) {
    case "openai-responses":
      return {
        openai: {
          // No server-side state: reasoning comes back as encrypted content that chatd
          // stores privately and replays.
          store: false,
          ...(o.reasoningEffort != null ? { reasoningEffort: o.reasoningEffort } : {}),
          ...(o.reasoningSummary != null ? { reasoningSummary: o.reasoningSummary } : {}),
        },
      };
    case "openai-chat":
      return { openai: o.reasoningEffort != null ? { reasoningEffort: o.reasoningEffort } : {} };
    case "openai-compatible":
      return { [COMPATIBLE_NAME]: o.reasoningEffort != null ? { reasoningEffort: o.reasoningEffort } : {} };
    case "anthropic": {
      const thinking: JSONObject | undefined =
        o.thinking == null
          ? undefined
          : o.thinking.type === "enabled"
            ? { type: "enabled", budgetTokens: o.thinking.budgetTokens }
            : { type: o.thinking.type };
      return {
        anthropic: {
          ...(thinking != null ? { thinking } : {}),
          ...(o.reasoningEffort != null && o.reasoningEffort !== "none" && o.reasoningEffort !== "minimal"
            ? { effort: o.reasoningEffort }
            : {}),
          ...(o.toolStreaming != null ? { toolStreaming: o.toolStreaming } : {}),
        },
      };
    }
    case "scripted":
      return {};
  }
}

export function buildCallOptions(
  config: ModelConfig,
  prompt: LanguageModelV4CallOptions["prompt"],
  tools: ToolSpec[],
  toolChoice: ToolChoice,
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  const v4Tools: NonNullable<LanguageModelV4CallOptions["tools"]> = tools.map((tool) => {
    const strict = tool.strict ?? config.options.strictTools;
    return {
      type: "function",
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      // Passed unmodified; any rewrite by the package is reported as a warning.
      inputSchema: tool.inputSchema,
      ...(strict != null ? { strict } : {}),
    };
  });
  for (const pt of config.options.providerTools ?? []) {
    v4Tools.push({ type: "provider", id: pt.id, name: pt.name, args: pt.args });
  }
  const o = config.options;
  return {
    prompt,
    ...(v4Tools.length > 0 ? { tools: v4Tools, toolChoice: v4ToolChoice(toolChoice) } : {}),
    ...(o.maxOutputTokens != null ? { maxOutputTokens: o.maxOutputTokens } : {}),
    ...(o.temperature != null ? { temperature: o.temperature } : {}),
    providerOptions: providerOptions(config),
    abortSignal,
  };
}
