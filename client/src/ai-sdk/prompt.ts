// From an AI SDK call to chatd inputs: the prompt becomes the content of one user message, function tools become
// chatd dynamic tools, and the tool results at the end of a prompt (the SDK ran the tools chatd paused on) become
// submitToolResults input.
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt, SharedV4Warning } from "@ai-sdk/provider";
import type { ContentPart, DynamicTool, ToolResult } from "../types.ts";

type ToolResultPart = Extract<Extract<LanguageModelV4Prompt[number], { role: "tool" }>["content"][number], { type: "tool-result" }>;

function renderPart(part: { type: string; text?: string }, warnings: SharedV4Warning[]): string | null {
  if ((part.type === "text" || part.type === "reasoning") && typeof part.text === "string") return part.text;
  warnings.push({ type: "unsupported", feature: `${part.type} parts in the prompt` });
  return null;
}

/**
 * The content of the user message chatd receives. A prompt of one user message keeps its text parts as they are;
 * a longer prompt (system text, earlier turns) becomes text parts labelled with their roles, in order.
 */
export function promptContent(prompt: LanguageModelV4Prompt, warnings: SharedV4Warning[]): ContentPart[] {
  const only = prompt.length === 1 ? prompt[0] : undefined;
  if (only?.role === "user") {
    return only.content.flatMap((part) => {
      const text = renderPart(part as { type: string; text?: string }, warnings);
      return text === null ? [] : [{ type: "text", text }];
    });
  }
  const parts: ContentPart[] = [];
  for (const message of prompt) {
    if (message.role === "system") {
      parts.push({ type: "text", text: `[system] ${message.content}` });
      continue;
    }
    const texts = (message.content as { type: string; text?: string }[])
      .map((part) => (part.type === "tool-call" || part.type === "tool-result" ? null : renderPart(part, warnings)))
      .filter((text): text is string => text !== null);
    if (texts.length > 0) parts.push({ type: "text", text: `[${message.role}] ${texts.join("\n")}` });
  }
  return parts;
}

export function dynamicTools(options: LanguageModelV4CallOptions, warnings: SharedV4Warning[]): DynamicTool[] {
  const tools: DynamicTool[] = [];
  for (const tool of options.tools ?? []) {
    if (tool.type !== "function") {
      warnings.push({ type: "unsupported", feature: `provider tool ${tool.id}` });
      continue;
    }
    tools.push({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), input_schema: tool.inputSchema as Record<string, unknown> });
  }
  return tools;
}

/** The tool results after the prompt's last assistant message (what the SDK just ran), in order. */
export function trailingToolResults(prompt: LanguageModelV4Prompt): ToolResultPart[] {
  let start = prompt.length;
  while (start > 0 && prompt[start - 1]!.role === "tool") start -= 1;
  return prompt.slice(start).flatMap((message) =>
    message.role === "tool" ? message.content.filter((part): part is ToolResultPart => part.type === "tool-result") : []);
}

/** What chatd stores as the result of one client tool call. */
export function toolResult(part: ToolResultPart): ToolResult {
  const output = part.output;
  switch (output.type) {
    case "text":
    case "json":
      return { toolCallId: part.toolCallId, result: output.value };
    case "error-text":
    case "error-json":
      return { toolCallId: part.toolCallId, result: output.value, isError: true };
    case "execution-denied":
      return { toolCallId: part.toolCallId, result: { denied: true, ...(output.reason ? { reason: output.reason } : {}) }, isError: true };
    default:
      return { toolCallId: part.toolCallId, result: output as unknown };
  }
}
