// Chat Completions wire encoder (`/v1/chat/completions`), also spoken by OpenAI-compatible
// servers (Ollama, vLLM, llama.cpp): `data: {chunk}` lines, `data: [DONE]` at the end.
import { finishOf, type MockTurn } from "./script.ts";

const FINISH: Record<string, string> = {
  stop: "stop",
  "pause-turn": "stop",
  "tool-calls": "tool_calls",
  length: "length",
  "content-filter": "content_filter",
};

export function chatEvents(turn: MockTurn, model: string): { events: unknown[]; done: boolean } {
  const base = { id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): unknown => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: unknown[] = [chunk({ role: "assistant", content: "" })];
  if (turn.reasoning != null) events.push(chunk({ reasoning_content: turn.reasoning.text }));
  for (const piece of turn.text ?? []) events.push(chunk({ content: piece }));
  if (turn.refusal != null) events.push(chunk({ refusal: turn.refusal }));
  (turn.toolCalls ?? []).forEach((call, index) => {
    call.fragments.forEach((fragment, i) => {
      const fn = i === 0 ? { name: call.name, arguments: fragment } : { arguments: fragment };
      const head = i === 0 ? { id: call.id ?? `call_${index}`, type: "function" } : {};
      events.push(chunk({ tool_calls: [{ index, ...head, function: fn }] }));
    });
    if (call.fragments.length === 0) {
      events.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }));
    }
  });
  if (turn.streamError != null) {
    events.push({ error: { message: turn.streamError.message, type: turn.streamError.type, code: null } });
  }
  if (turn.truncate === true) return { events, done: false };
  events.push(chunk({}, FINISH[finishOf(turn)] ?? "stop"));
  const usage = turn.usage ?? { input: 10, output: 5 };
  events.push({
    ...base,
    choices: [],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  });
  return { events, done: true };
}
