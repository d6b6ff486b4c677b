// OpenAI's error body, `{"error": {"message", "type", "param", "code"}}`, with `param` in the request's own terms
// (`text.format.schema`, `model`, `input`). The SDKs retry 408, 409, 429 and 5xx twice by default, so a refusal that
// would be refused again (bad input, an unknown model, a reused idempotency key) is always a 4xx outside those.
import { logger } from "../../log.ts";
import { ERROR_CODES } from "../error-codes.ts";
import { HttpError } from "../http/errors.ts";

export type ErrorType = "invalid_request_error" | "authentication_error" | "not_found_error" | "rate_limit_error" | "server_error";

export class OpenAIError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  /** Extra response headers (Retry-After, Connection: close). */
  readonly headers: Record<string, string>;
  constructor(status: number, message: string,
    options: { type?: ErrorType; param?: string | null; code?: string | null; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.type = options.type ?? "invalid_request_error";
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  body(): { error: { message: string; type: ErrorType; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const invalid = (message: string, param: string | null, code = "invalid_value"): OpenAIError =>
  new OpenAIError(400, message, { param, code });

export const notFound = (id: string): OpenAIError =>
  new OpenAIError(404, `Response with id '${id}' not found.`, { type: "not_found_error" });

/** How a chatd field name reads in the request: the response_format envelope is `text.format` in Responses. */
export type ParamDialect = "responses" | "chat";

export function paramFor(field: string | null, dialect: ParamDialect): string | null {
  if (field === null) return null;
  if (field === "model_config_id") return "model";
  if (field === "content" || field.startsWith("content[")) return dialect === "responses" ? "input" : "messages";
  if (field === "dynamic_tools" || field.startsWith("dynamic_tools[")) return field.replace(/^dynamic_tools/, "tools");
  if (field === "results") return "input";
  if (field === "idempotency_key") return null;
  if (dialect === "chat") return field;
  if (field === "response_format" || field === "response_format.type") return "text.format";
  return field.replace(/^response_format\.json_schema/, "text.format").replace(/^response_format\./, "text.format.");
}

interface PgLike {
  code: string;
  message: string;
  column?: string;
  severity?: string;
}

const isPg = (error: unknown): error is PgLike => typeof error === "object" && error !== null
  && typeof (error as PgLike).code === "string" && typeof (error as PgLike).severity === "string";

/** A registered SQLSTATE becomes its OpenAI refusal; anything else is logged with an id and answered 500. */
export function fromError(error: unknown, dialect: ParamDialect): OpenAIError {
  if (error instanceof OpenAIError) return error;
  // The shared HTTP layer's refusals (body size, encoding and depth; stream caps) in OpenAI's shape: `body` is no
  // request field, so it names none.
  if (error instanceof HttpError) {
    const field = error.validations[0]?.field ?? null;
    return new OpenAIError(error.status, error.message, { type: error.status === 429 ? "rate_limit_error" : "invalid_request_error",
      param: field === "body" ? null : field, code: error.code.toLowerCase(), headers: error.headers });
  }
  if (isPg(error)) {
    const registered = ERROR_CODES[error.code];
    if (registered) {
      const field = error.column ?? (registered.field === "column" ? null : registered.field);
      if (registered.code === "UNAUTHENTICATED") return new OpenAIError(401, error.message, { type: "authentication_error", code: "invalid_api_key" });
      if (registered.code === "NOT_FOUND") return new OpenAIError(404, error.message, { type: "not_found_error" });
      // A Response whose chat was deleted: not found, with a code of its own so a poller can stop asking.
      if (registered.code === "REQUEST_DELETED") {
        return new OpenAIError(404, error.message, { type: "not_found_error", code: "response_deleted" });
      }
      const code = field === "model_config_id" ? "model_not_found" : registered.code.toLowerCase();
      return new OpenAIError(400, error.message, { param: paramFor(field, dialect), code });
    }
    if (error.code === "22P05" || error.code === "22021") {
      return invalid("the input contains U+0000 or bytes that are not UTF-8, which cannot be stored", null, "invalid_input");
    }
  }
  const errorId = `${process.pid.toString(36)}-${Date.now().toString(36)}`;
  logger.error({ err: error, errorId }, "openai-compatible request failed");
  return new OpenAIError(500, `The server had an error while processing your request (id: ${errorId}).`, { type: "server_error" });
}
