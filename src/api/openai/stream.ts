// Server-sent events for a Response, derived only from committed rows, so every replay is the same: the same
// events with the same sequence_numbers. `response.created` and `response.in_progress` come first (their snapshot
// is the Response before any output), then, once the receipt commits, the output item's events and the terminal
// `response.completed` or `response.failed`. A cancelled Response has no terminal stream event in OpenAI's
// protocol: its stream ends after the events before it (clients retrieve). chatd's live token deltas are not
// durable and the value is valid only at the receipt, so the text arrives as one delta. A Response with function
// calls streams each call's item and arguments, then `response.completed`.
import type { ServerResponse } from "node:http";
import type { BoundedSender } from "../http/streams.ts";
import { isOpen, responseObject, statusOf, type ResponseRow } from "./response-object.ts";

type Event = Record<string, unknown> & { type: string };

const KEEP_ALIVE_MS = 15_000;

/** Per function call: the item added without arguments, the arguments in one delta, then done. */
function functionCallEvents(items: Record<string, unknown>[]): Event[] {
  return items.flatMap((item, index) => {
    const base = { item_id: item.id, output_index: index };
    const args = String(item.arguments);
    return [
      { type: "response.output_item.added", output_index: index, item: { ...item, arguments: "", status: "in_progress" } },
      { type: "response.function_call_arguments.delta", ...base, delta: args },
      { type: "response.function_call_arguments.done", ...base, name: item.name, arguments: args },
      { type: "response.output_item.done", output_index: index, item },
    ];
  });
}

function outputEvents(row: ResponseRow, full: Record<string, unknown>): Event[] {
  if (row.function_calls !== null) return functionCallEvents(full.output as Record<string, unknown>[]);
  const [item] = full.output as { id: string; content: Record<string, unknown>[] }[];
  if (!item) return [];
  const part = item.content[0]!;
  const base = { item_id: item.id, output_index: 0, content_index: 0 };
  const refusal = part.type === "refusal";
  const emptyPart = refusal ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [], logprobs: [] };
  const text = String(refusal ? part.refusal : part.text);
  return [
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.content_part.added", ...base, part: emptyPart },
    refusal ? { type: "response.refusal.delta", ...base, delta: text }
      : { type: "response.output_text.delta", ...base, delta: text, logprobs: [] },
    refusal ? { type: "response.refusal.done", ...base, refusal: text }
      : { type: "response.output_text.done", ...base, text, logprobs: [] },
    { type: "response.content_part.done", ...base, part },
    { type: "response.output_item.done", output_index: 0, item },
  ];
}

/** Every event of the Response as it stands, numbered from 0. */
export function responseEvents(row: ResponseRow): Event[] {
  const full = responseObject(row);
  const before = { ...full, status: "in_progress", completed_at: null, error: null, output: [], usage: null };
  const events: Event[] = [
    { type: "response.created", response: before },
    { type: "response.in_progress", response: before },
  ];
  const status = statusOf(row);
  if (status === "completed") events.push(...outputEvents(row, full), { type: "response.completed", response: full });
  if (status === "failed") events.push({ type: "response.failed", response: full });
  return events.map((event, index) => ({ ...event, sequence_number: index }));
}

export interface StreamSource {
  /** The row once it has its receipt (or as it stands when the wait ends). */
  waitForReceipt(chatId: string): Promise<ResponseRow | null>;
}

/**
 * Writes the events after `startingAfter` (all when null), waiting for the receipt when it is not there yet. Each
 * write waits for the client to read (the sender drops one that does not within the send deadline).
 */
export async function streamResponse(res: ServerResponse, sender: BoundedSender, row: ResponseRow, source: StreamSource,
  startingAfter: number | null): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const keepAlive = setInterval(() => sender.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  let sent = startingAfter ?? -1;
  const write = async (current: ResponseRow) => {
    for (const event of responseEvents(current)) {
      if ((event.sequence_number as number) <= sent) continue;
      if (!sender.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`) || !await sender.drained()) return;
      sent = event.sequence_number as number;
    }
  };
  try {
    await write(row);
    if (isOpen(row) && sender.ended === null) {
      const done = await source.waitForReceipt(row.chat_id);
      if (done && sender.ended === null) await write(done);
    }
  } finally {
    clearInterval(keepAlive);
    sender.end();
  }
}
