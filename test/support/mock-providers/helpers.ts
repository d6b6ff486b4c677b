// Small builders shared by the provider tests.
import type { ChatPrompt, ModelConfig, ProviderKind, StepEvent, ToolSpec } from "../../../src/providers/index.ts";

export const API_KEY = "sk-test-SECRET-key-0123456789";

export function configFor(provider: ProviderKind, url: string, model: string, options: ModelConfig["options"] = {}): ModelConfig {
  return { provider, model, baseUrl: url, apiKey: API_KEY, contextLimit: 128_000, options };
}

export function userPrompt(text: string, system?: string): ChatPrompt {
  return [
    ...(system != null ? [{ role: "system" as const, content: [{ type: "text" as const, text: system }] }] : []),
    { role: "user", content: [{ type: "text", text }] },
  ];
}

export const searchTool: ToolSpec = {
  name: "search",
  description: "Search the workspace",
  inputSchema: {
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
    additionalProperties: false,
  },
};

/** The finalizer with a caller schema that is not strict-eligible (optional property). */
export const finalizerTool: ToolSpec = {
  name: "coder_structured_output",
  description: "Submit the final answer",
  inputSchema: {
    type: "object",
    properties: {
      output: {
        type: "object",
        properties: { command: { type: "string" }, note: { type: "string" } },
        required: ["command"],
      },
    },
    required: ["output"],
    additionalProperties: false,
  },
  strict: false,
};

export function collectEvents(): { events: StepEvent[]; onEvent: (e: StepEvent) => void } {
  const events: StepEvent[] = [];
  return { events, onEvent: (e) => events.push(e) };
}
