// ChatPrompt (chatd's stored message model) → LanguageModelV4Prompt. Replay metadata
// stored with a part becomes that part's providerOptions, which is exactly what the
// provider packages read back (Anthropic `signature` / `redactedData`, OpenAI `itemId` /
// `reasoningEncryptedContent`), so reasoning round-trips across steps.
import type {
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import type { ChatPrompt, ReplayMetadata, ToolResultPart } from "./types.ts";

function options(replay: ReplayMetadata | undefined): { providerOptions?: SharedV4ProviderOptions } {
  return replay != null && Object.keys(replay).length > 0 ? { providerOptions: replay } : {};
}

function resultOutput(part: ToolResultPart): LanguageModelV4ToolResultOutput {
  if (part.is_error) {
    return typeof part.result === "string"
      ? { type: "error-text", value: part.result }
      : { type: "error-json", value: part.result };
  }
  return typeof part.result === "string"
    ? { type: "text", value: part.result }
    : { type: "json", value: part.result };
}

function toolResult(part: ToolResultPart): LanguageModelV4ToolResultPart {
  return {
    type: "tool-result",
    toolCallId: part.tool_call_id,
    toolName: part.tool_name,
    output: resultOutput(part),
    ...options(part.replay),
  };
}

export function toV4Prompt(prompt: ChatPrompt): LanguageModelV4Prompt {
  const out: LanguageModelV4Message[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case "system": {
        const text = message.content.map((p) => p.text).join("\n\n");
        if (text.length > 0) out.push({ role: "system", content: text });
        break;
      }
      case "user":
        out.push({
          role: "user",
          content: message.content.map((p) => ({ type: "text", text: p.text, ...options(p.replay) })),
        });
        break;
      case "assistant": {
        const content: Extract<LanguageModelV4Message, { role: "assistant" }>["content"] = [];
        for (const part of message.content) {
          switch (part.type) {
            case "text":
              content.push({ type: "text", text: part.text, ...options(part.replay) });
              break;
            case "reasoning":
              content.push({ type: "reasoning", text: part.text, ...options(part.replay) });
              break;
            case "tool-call":
              // The raw text is passed as a string: the OpenAI converters forward a parsable
              // string unchanged (duplicate keys and number spelling survive); Anthropic
              // parses it into an object itself.
              content.push({
                type: "tool-call",
                toolCallId: part.tool_call_id,
                toolName: part.tool_name,
                input: part.args,
                ...(part.provider_executed === true ? { providerExecuted: true } : {}),
                ...options(part.replay),
              });
              break;
            case "tool-result":
              // Only provider-executed results belong in an assistant message.
              content.push(toolResult(part));
              break;
          }
        }
        if (content.length > 0) out.push({ role: "assistant", content });
        break;
      }
      case "tool":
        if (message.content.length > 0) {
          out.push({ role: "tool", content: message.content.map(toolResult) });
        }
        break;
    }
  }
  return out;
}
