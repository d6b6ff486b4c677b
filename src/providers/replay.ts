// Turning a finished step back into prompt history. Replay metadata rides along
// unchanged; only the transient `incomplete` marker is dropped (the loop decides what an
// incomplete call becomes before it is stored).
import type { AssistantPart, ChatMessage, StepResult } from "./types.ts";

export function assistantMessageFromStep(step: Pick<StepResult, "parts">): ChatMessage {
  const content: AssistantPart[] = step.parts.map((part) => {
    if (part.type !== "tool-call" || part.incomplete == null) return part;
    const { incomplete: _incomplete, ...rest } = part;
    return rest;
  });
  return { role: "assistant", content };
}
