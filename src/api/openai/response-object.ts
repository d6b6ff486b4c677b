// A chatd request and its receipt as an OpenAI Response object. The mapping (docs/openai.md):
// queued → queued; running → in_progress; succeeded → completed with one message whose output_text is the
// receipt's exact valueJson (a plain-text Response: the string itself); refused → completed with a refusal part;
// other failures → failed with error.code the chatd code; canceled → cancelled. chatd never answers `incomplete`:
// a cut-off step is a rejected attempt that the repair budget retries. A Response with function calls (its turn
// waits, or waited, for client tools) is completed with `function_call` items and no receipt: the receipt shows on
// the request's newest Response only (sql/155_openai_responses.sql).
import { functionCallItems, type PendingCall } from "./tools.ts";

export interface ResponseRow {
  /** The Response's own id: the request's for its first Response, a round's for a continuation. */
  response_id: string;
  previous_response_id: string | null;
  request_id: string;
  chat_id: string;
  created_at: Date;
  finished_at: Date | null;
  status: "pending" | "succeeded" | "failed" | "canceled";
  error_code: string | null;
  error_message: string | null;
  value_json: string | null;
  input_tokens: string | null;
  output_tokens: string | null;
  model_config_id: string | null;
  chat_status: string;
  queued: boolean;
  background: boolean;
  echo: Record<string, unknown> | null;
  /** The calls this Response asked for: answered by the next round, or waited for now. */
  function_calls: PendingCall[] | null;
  calls_at: Date | null;
}

export type ResponseStatus = "queued" | "in_progress" | "completed" | "failed" | "cancelled" | "incomplete";

const UUID_HEX = /^resp_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/;

export const responseId = (requestId: string): string => `resp_${requestId.replaceAll("-", "")}`;

/** The uuid a `resp_…` id names (a request's or a round's), or null when it cannot name one. */
export function responseUuidOf(id: string): string | null {
  const match = UUID_HEX.exec(id);
  return match ? match.slice(1).join("-") : null;
}

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function statusOf(row: ResponseRow): ResponseStatus {
  if (row.function_calls !== null) return "completed";
  if (row.status === "pending") return row.queued ? "queued" : "in_progress";
  if (row.status === "succeeded" || row.error_code === "refused") return "completed";
  return row.status === "failed" ? "failed" : "cancelled";
}

const isPlainText = (row: ResponseRow): boolean =>
  ((row.echo?.text as { format?: { type?: string } } | undefined)?.format?.type) === "text";

/** Still waiting for the agent: neither finished nor waiting for the client. */
export const isOpen = (row: ResponseRow): boolean => row.function_calls === null && row.status === "pending";

/** The answer text: the exact valueJson, or for a plain-text Response the string it holds. */
export function outputText(row: ResponseRow): string | null {
  if (row.function_calls !== null) return null;
  if (row.status !== "succeeded" || row.value_json === null) return null;
  return isPlainText(row) ? JSON.parse(row.value_json) as string : row.value_json;
}

function output(row: ResponseRow): unknown[] {
  if (row.function_calls !== null) return functionCallItems(row.function_calls);
  const id = `msg_${row.response_id.replaceAll("-", "")}`;
  const text = outputText(row);
  if (text !== null) {
    return [{ type: "message", id, status: "completed", role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }] }];
  }
  if (row.error_code === "refused") {
    return [{ type: "message", id, status: "completed", role: "assistant",
      content: [{ type: "refusal", refusal: row.error_message ?? "refused" }] }];
  }
  return [];
}

function usage(row: ResponseRow): unknown {
  if (row.function_calls !== null || (row.input_tokens === null && row.output_tokens === null)) return null;
  const input = Number(row.input_tokens ?? 0);
  const outputTokens = Number(row.output_tokens ?? 0);
  return { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + outputTokens };
}

export function responseObject(row: ResponseRow): Record<string, unknown> {
  const status = statusOf(row);
  const echo = row.echo ?? {};
  return {
    id: responseId(row.response_id),
    object: "response",
    created_at: seconds(row.created_at),
    completed_at: status !== "completed" ? null : row.calls_at ? seconds(row.calls_at) : row.finished_at ? seconds(row.finished_at) : null,
    status,
    background: row.background,
    error: status === "failed" ? { code: row.error_code, message: row.error_message } : null,
    incomplete_details: null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    metadata: echo.metadata ?? {},
    model: echo.model ?? row.model_config_id,
    output: output(row),
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    // A round's previous Response is its row's; a follow-up's (a new request in the same chat) is in its echo.
    previous_response_id: row.previous_response_id === null ? echo.previous_response_id ?? null : responseId(row.previous_response_id),
    store: true,
    temperature: echo.temperature ?? null,
    text: echo.text ?? { format: { type: "json_schema" } },
    tool_choice: echo.tool_choice ?? "auto",
    tools: echo.tools ?? [],
    top_p: echo.top_p ?? null,
    truncation: "disabled",
    usage: usage(row),
    user: null,
    // chatd's own: the chat the Response runs in, for GraphQL and the console.
    chat_id: row.chat_id,
  };
}
