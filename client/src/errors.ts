// The errors the client throws. Every refusal of the server is a ChatdRequestError carrying the server's
// `extensions.code` (the registry in chatd's sql/README.md) and `extensions.validations`, so callers branch on
// `code` and show `validations` next to the fields they name, whichever layer of the server refused.

/** A field the server refused, e.g. `{field: "response_format.json_schema.schema", detail: "..."}`. */
export interface Validation {
  field: string;
  detail: string;
}

/** One entry of a GraphQL response's `errors`. */
export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; validations?: Validation[]; [key: string]: unknown };
}

export interface ChatdErrorOptions {
  code: string;
  validations?: Validation[];
  cause?: unknown;
}

/** Base class: `code` is the server's code, or one of the client's own (NETWORK, STREAM_ENDED, INVALID_SCHEMA). */
export class ChatdError extends Error {
  override name = "ChatdError";
  readonly code: string;
  readonly validations: Validation[];

  constructor(message: string, options: ChatdErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.validations = options.validations ?? [];
  }
}

/** The server refused the request (a GraphQL error): INVALID_INPUT, NOT_FOUND, INVALID_RESPONSE_FORMAT, ... */
export class ChatdRequestError extends ChatdError {
  override name = "ChatdRequestError";
  /** Every error of the response; `code`, `validations` and the message are the first one's. */
  readonly errors: GraphQLErrorEntry[];

  constructor(errors: GraphQLErrorEntry[], cause?: unknown) {
    const first = errors[0] ?? { message: "the server refused the request" };
    super(first.message, { code: first.extensions?.code ?? "GRAPHQL_ERROR", validations: first.extensions?.validations, cause });
    this.errors = errors;
  }
}

/** The token is missing, invalid or expired (HTTP 401, or UNAUTHENTICATED on the websocket). */
export class ChatdAuthError extends ChatdRequestError {
  override name = "ChatdAuthError";
}

/** The server could not be reached, or answered with something that is not GraphQL. */
export class ChatdNetworkError extends ChatdError {
  override name = "ChatdNetworkError";
  /** The HTTP status, when there was a response. */
  readonly status: number | null;

  constructor(message: string, status: number | null, cause?: unknown) {
    super(message, { code: "NETWORK", cause });
    this.status = status;
  }
}

/** The schema given to `structured` cannot be turned into JSON Schema, or a value fails it on the client. */
export class ChatdSchemaError extends ChatdError {
  override name = "ChatdSchemaError";
}

/** The error for a GraphQL response's `errors`: the auth class for UNAUTHENTICATED, else a request error. */
export function requestError(errors: GraphQLErrorEntry[], cause?: unknown): ChatdRequestError {
  return errors[0]?.extensions?.code === "UNAUTHENTICATED" ? new ChatdAuthError(errors, cause) : new ChatdRequestError(errors, cause);
}
