// OpenAI Responses wire encoder (`/v1/responses`): typed events, each sent with an
// `event:` line like the real API; no `[DONE]`.
import { finishOf, type MockTurn } from "./script.ts";

export function responsesEvents(turn: MockTurn, model: string): { events: unknown[]; done: boolean } {
  const response = { id: "resp_mock", object: "response", created_at: 1_700_000_000, model, status: "in_progress" };
  const events: unknown[] = [
    { type: "response.created", response },
    { type: "response.in_progress", response },
  ];
  let outputIndex = 0;
  const output: unknown[] = [];

  if (turn.reasoning != null) {
    const r = turn.reasoning;
    const id = r.itemId ?? "rs_mock";
    const o = outputIndex++;
    events.push({ type: "response.output_item.added", output_index: o, item: { type: "reasoning", id, summary: [], encrypted_content: null } });
    events.push({ type: "response.reasoning_summary_part.added", item_id: id, output_index: o, summary_index: 0, part: { type: "summary_text", text: "" } });
    events.push({ type: "response.reasoning_summary_text.delta", item_id: id, output_index: o, summary_index: 0, delta: r.text });
    events.push({ type: "response.reasoning_summary_part.done", item_id: id, output_index: o, summary_index: 0, part: { type: "summary_text", text: r.text } });
    const item = { type: "reasoning", id, summary: [{ type: "summary_text", text: r.text }], encrypted_content: r.encryptedContent ?? null };
    events.push({ type: "response.output_item.done", output_index: o, item });
    output.push(item);
  }

  if ((turn.text?.length ?? 0) > 0 || turn.refusal != null) {
    const id = "msg_mock";
    const o = outputIndex++;
    events.push({ type: "response.output_item.added", output_index: o, item: { type: "message", id, role: "assistant", status: "in_progress", content: [] } });
    const content: unknown[] = [];
    if (turn.refusal != null) {
      events.push({ type: "response.refusal.delta", item_id: id, output_index: o, content_index: 0, delta: turn.refusal });
      events.push({ type: "response.refusal.done", item_id: id, output_index: o, content_index: 0, refusal: turn.refusal });
      content.push({ type: "refusal", refusal: turn.refusal });
    } else {
      events.push({ type: "response.content_part.added", item_id: id, output_index: o, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const piece of turn.text ?? []) {
        events.push({ type: "response.output_text.delta", item_id: id, output_index: o, content_index: 0, delta: piece });
      }
      const text = (turn.text ?? []).join("");
      events.push({ type: "response.output_text.done", item_id: id, output_index: o, content_index: 0, text });
      content.push({ type: "output_text", text, annotations: [] });
    }
    const item = { type: "message", id, role: "assistant", status: "completed", content };
    events.push({ type: "response.output_item.done", output_index: o, item });
    output.push(item);
  }

  const truncatedCalls = turn.truncate === true || finishOf(turn) === "length";
  (turn.toolCalls ?? []).forEach((call, index) => {
    const id = `fc_mock_${index}`;
    const callId = call.id ?? `call_${index}`;
    const o = outputIndex++;
    events.push({
      type: "response.output_item.added",
      output_index: o,
      item: { type: "function_call", id, call_id: callId, name: call.name, arguments: "", status: "in_progress" },
    });
    for (const delta of call.fragments) {
      events.push({ type: "response.function_call_arguments.delta", item_id: id, output_index: o, delta });
    }
    if (truncatedCalls) return; // cut inside the arguments: no done events
    const args = call.fragments.join("");
    events.push({ type: "response.function_call_arguments.done", item_id: id, output_index: o, arguments: args });
    const item = { type: "function_call", id, call_id: callId, name: call.name, arguments: args, status: "completed" };
    events.push({ type: "response.output_item.done", output_index: o, item });
    output.push(item);
  });

  if (turn.streamError != null) {
    events.push({ type: "error", sequence_number: events.length, code: turn.streamError.type, message: turn.streamError.message, param: null });
  }
  if (turn.truncate === true) return { events, done: false };

  const usage = turn.usage ?? { input: 10, output: 5 };
  const finish = finishOf(turn);
  const incomplete = finish === "length" ? "max_output_tokens" : finish === "content-filter" && turn.refusal == null ? "content_filter" : undefined;
  events.push({
    type: incomplete != null ? "response.incomplete" : "response.completed",
    response: {
      ...response,
      status: incomplete != null ? "incomplete" : "completed",
      incomplete_details: incomplete != null ? { reason: incomplete } : null,
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    },
  });
  return { events, done: false };
}
