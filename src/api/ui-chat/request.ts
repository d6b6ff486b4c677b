// The shape of a `POST /api/chat` body, checked whole before anything is done with it: a request that fails here
// has no side effect, and each refusal names its field. Only what chatd reads is checked (ids, roles, parts and
// their types, the tool answer fields); the rest of a UI message passes through untouched.
import type { UIMessage } from "ai";
import { SCHEMA_MAX_JSON_DEPTH } from "../../structured/caps.ts";
import { badRequest } from "../http/errors.ts";
import type { JsonBodyLimits } from "../http/json-body.ts";
import { MAX_REQUEST_BYTES } from "../preset.ts";
import type { ChatRequest } from "./actions.ts";

/** A schema as deep as chatd accepts, inside `dynamicTools[i].inputSchema` or `responseFormat.json_schema.schema`,
 * fits with room to spare; a tool output as deep as a structured value (64) does too. */
export const BODY_LIMITS: Readonly<JsonBodyLimits> = Object.freeze({ maxBytes: MAX_REQUEST_BYTES, maxDepth: SCHEMA_MAX_JSON_DEPTH + 8 });

const ROLES = new Set(["user", "assistant", "system"]);
const TRIGGERS = new Set(["submit-message", "regenerate-message"]);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

function optionalString(value: unknown, field: string): void {
  if (value !== undefined && value !== null && typeof value !== "string") throw badRequest(field, "must be a string");
}

function checkPart(part: unknown, field: string): void {
  if (!isObject(part)) throw badRequest(field, "must be an object");
  if (typeof part.type !== "string") throw badRequest(`${field}.type`, "must be a string");
  if (part.type === "text" && typeof part.text !== "string") throw badRequest(`${field}.text`, "must be a string");
  if (part.toolCallId !== undefined && typeof part.toolCallId !== "string") throw badRequest(`${field}.toolCallId`, "must be a string");
  if (part.state !== undefined && typeof part.state !== "string") throw badRequest(`${field}.state`, "must be a string");
  if (part.errorText !== undefined && typeof part.errorText !== "string") throw badRequest(`${field}.errorText`, "must be a string");
}

function checkMessage(message: unknown, field: string): void {
  if (!isObject(message)) throw badRequest(field, "must be a UI message {id, role, parts}");
  if (typeof message.id !== "string") throw badRequest(`${field}.id`, "must be a string");
  if (typeof message.role !== "string" || !ROLES.has(message.role)) throw badRequest(`${field}.role`, "must be user, assistant or system");
  if (!Array.isArray(message.parts)) throw badRequest(`${field}.parts`, "must be an array of parts");
  message.parts.forEach((part, index) => checkPart(part, `${field}.parts[${index}]`));
  if (message.metadata !== undefined && message.metadata !== null && !isObject(message.metadata)) {
    throw badRequest(`${field}.metadata`, "must be an object");
  }
}

/** The body as a ChatRequest, or a 400 naming the first field that is not what the AI SDK's transport sends. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw badRequest("body", "must be {id, messages, ...} as the AI SDK's DefaultChatTransport sends it");
  if (typeof body.id !== "string" || body.id === "") throw badRequest("id", "must be a non-empty string");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw badRequest("messages", "must be a non-empty array of UI messages");
  body.messages.forEach((message, index) => checkMessage(message, `messages[${index}]`));
  if (body.trigger !== undefined && (typeof body.trigger !== "string" || !TRIGGERS.has(body.trigger))) {
    throw badRequest("trigger", "must be submit-message or regenerate-message");
  }
  if (body.messageId !== undefined && typeof body.messageId !== "string") throw badRequest("messageId", "must be a string");
  if (body.responseFormat != null && typeof body.responseFormat !== "string" && !isObject(body.responseFormat)) {
    throw badRequest("responseFormat", "must be the JSON text of a response_format envelope, or that envelope");
  }
  optionalString(body.workspace, "workspace");
  optionalString(body.modelConfigId, "modelConfigId");
  if (body.dynamicTools != null && !Array.isArray(body.dynamicTools)) {
    throw badRequest("dynamicTools", "must be an array of {name, description, inputSchema}");
  }
  return { ...body, messages: body.messages as UIMessage[] } as ChatRequest;
}
