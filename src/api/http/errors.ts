// One error mapper for every HTTP route outside GraphQL (the useChat endpoint, the OpenAI-compatible routes):
// a refusal is an HttpError with its status, its registered code and the fields it names; anything else is a
// fault, answered 500 with an opaque id that the log carries (never the error's own text).
import type { ServerResponse } from "node:http";
import { logger } from "../../log.ts";

export interface FieldError {
  /** Where in the body, e.g. `messages[0].parts`; `body` for the body as a whole. */
  field: string;
  detail: string;
}

/** The status of each registered refusal code (error-codes.ts); other codes are refusals of a well-formed request. */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  INVALID_INPUT: 400, INVALID_RESPONSE_FORMAT: 400, RESERVED_TOOL_NAME: 400, UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHENTICATED: 401, FORBIDDEN: 403, STRUCTURED_OUTPUT_DISABLED: 403, NOT_FOUND: 404, METHOD_NOT_ALLOWED: 405,
  TRANSITION_NOT_ALLOWED: 409, PAYLOAD_TOO_LARGE: 413, TOO_MANY_STREAMS: 429, INTERNAL: 500,
  // The database is failing over or restarting: a 5xx, so clients and proxies retry it (keys make that safe).
  UNAVAILABLE: 503,
};

export function statusOfCode(code: string): number {
  return STATUS_OF_CODE[code] ?? 422;
}

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly validations: FieldError[];
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, validations: FieldError[] = [], headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.validations = validations;
    this.headers = headers;
  }
}

/** A malformed request: 400 INVALID_INPUT naming the field. */
export function badRequest(field: string, detail: string): HttpError {
  return new HttpError(400, "INVALID_INPUT", `${field} ${detail}`, [{ field, detail }]);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** A JSON body serialized already (a transcript page, whose parts were serialized as it was built). */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json", "cache-control": "no-store" }).end(text);
}

let counter = 0;

/** Answers `error` as `{error: {code, message, validations}}`; a response already started is ended instead. */
export function sendError(res: ServerResponse, error: unknown): void {
  let refusal: HttpError;
  if (error instanceof HttpError) {
    refusal = error;
  } else {
    counter += 1;
    const errorId = `${process.pid.toString(36)}-${Date.now().toString(36)}-${counter}`;
    logger.error({ err: error, errorId }, "HTTP request failed");
    refusal = new HttpError(500, "INTERNAL", `the request failed (id: ${errorId})`);
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, refusal.status, { error: { code: refusal.code, message: refusal.message, validations: refusal.validations } },
    refusal.headers);
}
