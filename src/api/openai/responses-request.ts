// `POST /v1/responses` body → what chatd's transition takes. Fields chatd cannot honour are refused with their
// `param`; fields that only tune sampling are accepted and ignored (docs/openai.md lists both).
import { createHash } from "node:crypto";
import { invalid, OpenAIError } from "./errors.ts";
import { envelopeFor, TEXT_ENVELOPE } from "./format.ts";
import { responseUuidOf } from "./response-object.ts";
import { dynamicTools, toolResults, toolsEcho, type DynamicTool, type ToolResult } from "./tools.ts";

export interface CreateResponse {
  content: { type: "text"; text: string }[];
  envelope: string;
  model: string | null;
  workspace: string | null;
  background: boolean;
  /** Answer with server-sent events instead of one JSON body. */
  stream: boolean;
  /** What the Response object echoes back. */
  echo: Record<string, unknown>;
  bodySha256: string;
  /** Function tools, as the chat's dynamic (client) tools. */
  tools: DynamicTool[];
  /**
   * The Response this one continues (its uuid), or null for a new chat: its function calls answered by `results`
   * (a client tool round), or, with no results, a new message in its chat (a follow-up).
   */
  previous: string | null;
  results: ToolResult[];
}

/** Accepted and not acted on: sampling and presentation knobs, and `store` (chatd always stores). */
const IGNORED = new Set(["temperature", "top_p", "max_output_tokens", "parallel_tool_calls", "tool_choice", "user",
  "service_tier", "reasoning", "truncation", "include", "prompt_cache_key", "safety_identifier", "top_logprobs",
  "max_tool_calls", "store", "stream_options"]);
const HANDLED = new Set(["model", "input", "instructions", "text", "background", "metadata", "workspace", "stream",
  "tools", "previous_response_id", "conversation", "prompt"]);


const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(`${key} must be a string`, key);
  return value;
}

/** One message item's text: a string, or input_text parts. */
function itemText(content: unknown, param: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${param} must be a string or an array of input_text parts`, param);
  return content.map((part, i) => {
    if (!isObject(part) || part.type !== "input_text" || typeof part.text !== "string") {
      throw invalid(`${param}[${i}] must be {"type": "input_text", "text": ...}; chatd takes text input only`, `${param}[${i}]`);
    }
    return part.text;
  }).join("");
}

/** `input` as user text parts; system and developer messages become instructions, before them. */
function inputParts(input: unknown): { user: string[]; instructions: string[] } {
  if (typeof input === "string") return { user: [input], instructions: [] };
  if (!Array.isArray(input) || input.length === 0) throw invalid("input must be a string or a non-empty array of message items", "input");
  const user: string[] = [];
  const instructions: string[] = [];
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (!isObject(item)) throw invalid(`${param} must be an object`, param);
    if (item.type !== undefined && item.type !== "message") {
      throw invalid(`${param}.type '${String(item.type)}' is not supported by chatd here: message items start or follow up `
        + "a Response; function_call_output items answer a Response's calls (with previous_response_id)", `${param}.type`);
    }
    const text = itemText(item.content, `${param}.content`);
    if (item.role === "user") user.push(text);
    else if (item.role === "system" || item.role === "developer") instructions.push(text);
    else throw invalid(`${param}.role must be user, system or developer (a Response starts a new chatd chat)`, `${param}.role`);
  });
  if (user.length === 0) throw invalid("input needs at least one user message", "input");
  return { user, instructions };
}

function metadataOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalid("metadata must be an object of strings", "metadata");
  const entries = Object.entries(value);
  if (entries.length > 16) throw invalid("metadata has more than 16 keys", "metadata");
  for (const [key, item] of entries) {
    if (key.length > 64) throw invalid(`metadata key '${key.slice(0, 64)}…' is longer than 64 characters`, "metadata");
    if (typeof item !== "string" || item.length > 512) throw invalid(`metadata.${key} must be a string of at most 512 characters`, `metadata.${key}`);
  }
  return value as Record<string, string>;
}

function envelopeOf(text: unknown): { envelope: string; echo: Record<string, unknown> } {
  if (text === undefined || text === null) return { envelope: TEXT_ENVELOPE, echo: { format: { type: "text" } } };
  if (!isObject(text)) throw invalid("text must be an object", "text");
  const format = text.format;
  if (format === undefined || format === null || (isObject(format) && format.type === "text")) {
    return { envelope: TEXT_ENVELOPE, echo: { ...text, format: { type: "text" } } };
  }
  if (!isObject(format) || format.type !== "json_schema") {
    throw invalid("text.format.type must be 'json_schema' or 'text' (chatd needs a schema to validate against)", "text.format.type");
  }
  return { envelope: envelopeFor(format, "text.format", "responses"), echo: text };
}

export function parseCreateResponse(body: unknown): CreateResponse {
  if (!isObject(body)) throw invalid("the body must be a JSON object", null);
  for (const key of Object.keys(body)) {
    if (!IGNORED.has(key) && !HANDLED.has(key)) throw invalid(`Unrecognized request argument supplied: ${key}`, key, "unknown_parameter");
  }
  if (body.store === false) throw invalid("store: false is not supported: chatd keeps every Response and its receipt", "store");
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") throw invalid("stream must be a boolean", "stream");
  for (const key of ["conversation", "prompt"]) {
    if (body[key] !== undefined && body[key] !== null) throw invalid(`${key} is not supported by chatd`, key);
  }
  if (body.background !== undefined && body.background !== null && typeof body.background !== "boolean") {
    throw invalid("background must be a boolean", "background");
  }
  const tools = dynamicTools(body.tools);
  const previousId = optionalString(body, "previous_response_id");
  const previous = previousId === null ? null : responseUuidOf(previousId);
  if (previousId !== null && previous === null) {
    throw invalid(`Previous response with id '${previousId}' not found.`, "previous_response_id");
  }
  if (previous !== null && hasToolOutputs(body.input)) return continuation(body, previous, tools, body.input);
  const model = optionalString(body, "model");
  const instructions = optionalString(body, "instructions");
  const { user, instructions: fromInput } = inputParts(body.input);
  const allInstructions = [...(instructions === null ? [] : [instructions]), ...fromInput];
  const { envelope, echo: text } = envelopeOf(body.text);
  const metadata = metadataOf(body.metadata);
  return {
    content: [...allInstructions, ...user].map((t) => ({ type: "text", text: t })),
    envelope,
    model,
    workspace: optionalString(body, "workspace"),
    background: body.background === true,
    stream: body.stream === true,
    echo: { model, instructions, text, metadata, tools: toolsEcho(tools), ...(previousId === null ? {} : { previous_response_id: previousId }),
      temperature: body.temperature ?? null, top_p: body.top_p ?? null,
      max_output_tokens: body.max_output_tokens ?? null, tool_choice: body.tool_choice ?? "auto",
      parallel_tool_calls: body.parallel_tool_calls ?? true },
    bodySha256: bodySha256(body),
    tools,
    previous,
    results: [],
  };
}

const hasToolOutputs = (input: unknown): input is unknown[] =>
  Array.isArray(input) && input.some((item) => isObject(item) && item.type === "function_call_output");

const bodySha256 = (body: unknown): string => createHash("sha256").update(JSON.stringify(body)).digest("hex");

/**
 * A body with `previous_response_id` and `function_call_output` items for the calls that Response waits for. The turn
 * keeps its model, instructions and format, so fields that would set them are ignored here (docs/openai.md).
 */
function continuation(body: Record<string, unknown>, previous: string, tools: DynamicTool[], input: unknown[]): CreateResponse {
  const metadata = metadataOf(body.metadata);
  return {
    content: [], envelope: TEXT_ENVELOPE, model: null, workspace: null,
    background: body.background === true,
    stream: body.stream === true,
    echo: body.metadata === undefined ? {} : { metadata },
    bodySha256: bodySha256(body),
    tools,
    previous,
    results: toolResults(input),
  };
}

/** `Idempotency-Key`: at most 190 characters of visible ASCII (it is stored and compared as is). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] ?? "" : header;
  if (!/^[\x21-\x7e]{1,190}$/.test(value)) {
    throw new OpenAIError(400, "Idempotency-Key must be 1 to 190 visible ASCII characters", { param: null, code: "invalid_idempotency_key" });
  }
  return value;
}
