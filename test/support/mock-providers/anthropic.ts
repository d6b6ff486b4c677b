// Anthropic Messages wire encoder (`/v1/messages`): `event: <type>` + `data:` per event,
// thinking blocks with signature deltas, tool_use blocks with `input_json_delta`.
import { finishOf, type MockTurn } from "./script.ts";

const STOP: Record<string, string> = {
  stop: "end_turn",
  "pause-turn": "pause_turn",
  "tool-calls": "tool_use",
  length: "max_tokens",
  "content-filter": "refusal",
};

export function anthropicEvents(turn: MockTurn, model: string): { events: unknown[]; done: boolean } {
  const usage = turn.usage ?? { input: 10, output: 5 };
  const events: unknown[] = [
    {
      type: "message_start",
      message: {
        id: "msg_mock",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    },
  ];
  let index = 0;
  const r = turn.reasoning;
  if (r?.redactedData != null) {
    events.push({ type: "content_block_start", index, content_block: { type: "redacted_thinking", data: r.redactedData } });
    events.push({ type: "content_block_stop", index: index++ });
  } else if (r != null) {
    events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
    events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: r.text } });
    if (r.signature != null) {
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: r.signature } });
    }
    events.push({ type: "content_block_stop", index: index++ });
  }
  const text = [...(turn.text ?? []), ...(turn.refusal != null ? [turn.refusal] : [])];
  if (text.length > 0) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const piece of text) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    events.push({ type: "content_block_stop", index: index++ });
  }
  const finish = turn.refusal != null ? "content-filter" : finishOf(turn);
  (turn.toolCalls ?? []).forEach((call, i) => {
    const id = call.id ?? `toolu_mock_${i}`;
    events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id, name: call.name, input: {} } });
    for (const partial of call.fragments) {
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
    }
    // max_tokens inside a tool_use block: the block is never stopped.
    if (finish !== "length") events.push({ type: "content_block_stop", index });
    index++;
  });
  if (turn.streamError != null) {
    events.push({ type: "error", error: { type: turn.streamError.type, message: turn.streamError.message } });
  }
  if (turn.truncate === true) return { events, done: false };
  events.push({
    type: "message_delta",
    delta: { stop_reason: STOP[finish] ?? "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  events.push({ type: "message_stop" });
  return { events, done: false };
}
