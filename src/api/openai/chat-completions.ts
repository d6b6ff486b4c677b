// `POST /v1/chat/completions` with `response_format`: one chat per call (the API is stateless), answered when the
// receipt commits. The wait is bounded (CHATD_OPENAI_CHAT_WAIT_SECONDS, default 120): an agent turn can take
// minutes, and a synchronous call that outlives the SDK's or a proxy's timeout would be retried into a second
// request, so a longer turn is answered with an error naming its Response, which /v1/responses can retrieve.
import { createHash } from "node:crypto";
import { invalid, OpenAIError } from "./errors.ts";
import { envelopeFor, TEXT_ENVELOPE } from "./format.ts";
import { outputText, responseId, statusOf, type ResponseRow } from "./response-object.ts";
import { createResponse, waitForReceipt, type Store } from "./store.ts";

const IGNORED = new Set(["temperature", "top_p", "max_tokens", "max_completion_tokens", "user", "seed", "stop",
  "presence_penalty", "frequency_penalty", "logit_bias", "parallel_tool_calls", "tool_choice", "service_tier",
  "reasoning_effort", "store", "metadata", "n", "stream_options", "prompt_cache_key", "safety_identifier", "verbosity"]);
const HANDLED = new Set(["model", "messages", "response_format", "stream", "tools", "workspace"]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function chatWaitMs(): number {
  const raw = Number(process.env.CHATD_OPENAI_CHAT_WAIT_SECONDS ?? "120");
  return Number.isFinite(raw) && raw > 0 ? raw * 1000 : 120_000;
}

function messageText(content: unknown, param: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of text parts`, param);
  return content.map((part, i) => {
    if (!isObject(part) || part.type !== "text" || typeof part.text !== "string") {
      throw invalid(`${param}[${i}] must be {"type": "text", "text": ...}; chatd takes text input only`, `${param}[${i}]`);
    }
    return part.text;
  }).join("");
}

function contentOf(messages: unknown): { type: "text"; text: string }[] {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid("messages must be a non-empty array", "messages");
  const system: string[] = [];
  const user: string[] = [];
  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isObject(message)) throw invalid(`${param} must be an object`, param);
    const text = messageText(message.content, `${param}.content`);
    if (message.role === "system" || message.role === "developer") system.push(text);
    else if (message.role === "user") user.push(text);
    else throw invalid(`${param}.role must be system, developer or user (each call is a new chatd chat)`, `${param}.role`);
  });
  if (user.length === 0) throw invalid("messages needs at least one user message", "messages");
  return [...system, ...user].map((text) => ({ type: "text", text }));
}

function envelopeOf(format: unknown): { envelope: string; plain: boolean } {
  if (format === undefined || format === null || (isObject(format) && format.type === "text")) return { envelope: TEXT_ENVELOPE, plain: true };
  if (!isObject(format) || format.type !== "json_schema") {
    throw invalid("response_format.type must be 'json_schema' or 'text'", "response_format.type");
  }
  return { envelope: envelopeFor(format.json_schema, "response_format.json_schema", "chat"), plain: false };
}

function completion(row: ResponseRow, model: string | null): Record<string, unknown> {
  const refused = row.error_code === "refused";
  const input = Number(row.input_tokens ?? 0);
  const output = Number(row.output_tokens ?? 0);
  return {
    id: `chatcmpl-${row.request_id.replaceAll("-", "")}`,
    object: "chat.completion",
    created: Math.floor(row.created_at.getTime() / 1000),
    model: model ?? row.model_config_id,
    choices: [{ index: 0, finish_reason: "stop", logprobs: null, message: { role: "assistant",
      content: refused ? null : outputText(row), refusal: refused ? row.error_message : null, annotations: [] } }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    service_tier: null,
    system_fingerprint: null,
  };
}

export async function chatCompletion(store: Store, userId: string, body: unknown, signal: AbortSignal, idempotencyKey: string | null = null): Promise<Record<string, unknown>> {
  if (!isObject(body)) throw invalid("the body must be a JSON object", null);
  for (const key of Object.keys(body)) {
    if (!IGNORED.has(key) && !HANDLED.has(key)) throw invalid(`Unrecognized request argument supplied: ${key}`, key, "unknown_parameter");
  }
  if (body.stream === true) throw invalid("stream is not supported by chatd's chat completions; use /v1/responses", "stream");
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalid("n must be 1", "n");
  if (Array.isArray(body.tools) && body.tools.length > 0) throw invalid("tools are not supported on chat completions; use /v1/responses", "tools");
  if (body.model !== undefined && body.model !== null && typeof body.model !== "string") throw invalid("model must be a string", "model");
  if (body.workspace !== undefined && body.workspace !== null && typeof body.workspace !== "string") throw invalid("workspace must be a string", "workspace");
  const model = (body.model as string | undefined) ?? null;
  const content = contentOf(body.messages);
  const { envelope, plain } = envelopeOf(body.response_format);
  const echo = { model, text: { format: plain ? { type: "text" } : { type: "json_schema" } }, metadata: {}, api: "chat.completions" };
  const first = await createResponse(store, userId, {
    content, envelope, model, workspace: (body.workspace as string | undefined) ?? null, background: false, stream: false, echo,
    bodySha256: createHash("sha256").update(JSON.stringify(body)).digest("hex"), tools: [], previous: null, results: [],
  }, idempotencyKey);
  const requestId = first.response_id;
  const row = first.status === "pending"
    ? await waitForReceipt(store, userId, requestId, first.chat_id, chatWaitMs(), signal) : first;
  if (!row) throw new OpenAIError(404, "the request vanished", { type: "not_found_error" });
  const status = statusOf(row);
  if (status === "queued" || status === "in_progress") {
    throw new OpenAIError(422, `the agent turn is still running after ${chatWaitMs() / 1000} s; it goes on as Response `
      + `${responseId(requestId)}: retrieve it with GET /v1/responses/${responseId(requestId)}, and use /v1/responses `
      + "with background: true for long turns", { code: "turn_still_running" });
  }
  if (status === "failed" || status === "cancelled") {
    throw new OpenAIError(422, row.error_message ?? "the request did not succeed", { code: row.error_code });
  }
  return completion(row, model);
}
