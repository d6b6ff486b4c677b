// Retry classification for the worker loop with sanitized messages: only a
// status code and an error kind ever leave this module. Provider bodies, request bodies
// (which hold schemas and prompt text), URLs and credentials are dropped on purpose.
import { APICallError } from "@ai-sdk/provider";
import { isAbortError, isProviderStreamError } from "@ai-sdk/provider-utils";
import type { ClassifiedError } from "./types.ts";

const RETRYABLE_STATUS = (status: number): boolean =>
  status === 408 || status === 409 || status === 429 || status === 529 || status >= 500;

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Error kinds named by Anthropic/OpenAI error payloads, mapped to chatd's kinds. */
const TYPE_KINDS: Record<string, { kind: string; status?: number; retryable: boolean }> = {
  overloaded_error: { kind: "overloaded", status: 529, retryable: true },
  rate_limit_error: { kind: "rate_limit", status: 429, retryable: true },
  api_error: { kind: "server_error", status: 500, retryable: true },
  server_error: { kind: "server_error", status: 500, retryable: true },
  authentication_error: { kind: "auth", status: 401, retryable: false },
  permission_error: { kind: "auth", status: 403, retryable: false },
  invalid_request_error: { kind: "bad_request", status: 400, retryable: false },
  not_found_error: { kind: "not_found", status: 404, retryable: false },
  insufficient_quota: { kind: "usage_limit", status: 429, retryable: false },
};

function kindForStatus(status: number): string {
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 408) return "timeout";
  if (status === 409) return "conflict";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit";
  if (status === 529) return "overloaded";
  if (status >= 500) return "server_error";
  if (status >= 400) return "bad_request";
  return "unknown";
}

function sanitized(kind: string, retryable: boolean, status?: number): ClassifiedError {
  const message =
    status != null ? `provider error: ${kind} (HTTP ${status})` : `provider error: ${kind}`;
  return status != null ? { retryable, kind, status, message } : { retryable, kind, message };
}

function networkCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current != null && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A configuration problem found by chatd itself (never retried). */
export function configurationError(detail: string): ClassifiedError {
  // `detail` is chatd's own text (tool names, feature names), never provider output.
  return { retryable: false, kind: "configuration_error", message: `configuration error: ${detail}` };
}

export function classifyProviderError(err: unknown): ClassifiedError {
  if (isAbortError(err)) return sanitized("aborted", false);

  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (status == null) {
      // No HTTP status: the package wraps connection failures this way (isRetryable true).
      return sanitized(err.isRetryable ? "network" : "unknown", err.isRetryable);
    }
    const retryable = err.isRetryable || RETRYABLE_STATUS(status);
    return sanitized(kindForStatus(status), retryable, status);
  }

  if (isProviderStreamError(err)) {
    const byType = err.type != null ? TYPE_KINDS[err.type] : undefined;
    const byCode = typeof err.code === "string" ? TYPE_KINDS[err.code] : undefined;
    const known = byCode ?? byType;
    const status = err.statusCode ?? known?.status;
    const retryable =
      err.isRetryable ?? known?.retryable ?? (status != null ? RETRYABLE_STATUS(status) : false);
    const kind = known?.kind ?? (status != null ? kindForStatus(status) : "stream_error");
    return sanitized(kind, retryable, status);
  }

  const code = networkCode(err);
  if (code != null) return sanitized("network", true);
  if (err instanceof TypeError && /fetch failed/i.test(err.message)) return sanitized("network", true);

  if (err != null && typeof err === "object") {
    const name = (err as { name?: unknown }).name;
    if (name === "AI_UnsupportedFunctionalityError" || name === "AI_InvalidArgumentError") {
      // The package refused the request shape (e.g. a schema keyword it cannot express).
      return configurationError("the provider package rejected the request options");
    }
    if (name === "AI_InvalidPromptError") return configurationError("the prompt could not be encoded");
    if (name === "AI_LoadAPIKeyError") return sanitized("missing_key", false);
    if (name === "AI_InvalidResponseDataError" || name === "AI_JSONParseError" || name === "AI_TypeValidationError") {
      // Garbled stream data is usually transient (proxy, truncated chunk).
      return sanitized("invalid_response", true);
    }
    // Error payloads such as Anthropic's {type:'overloaded_error', message}.
    const type = (err as { type?: unknown }).type;
    if (typeof type === "string" && TYPE_KINDS[type] != null) {
      const known = TYPE_KINDS[type];
      return sanitized(known.kind, known.retryable, known.status);
    }
  }
  return sanitized("unknown", false);
}

/** Thrown by the scripted provider to simulate HTTP failures with a status. */
export function syntheticApiError(status: number, url: string): APICallError {
  return new APICallError({
    message: `scripted provider failure (HTTP ${status})`,
    url,
    requestBodyValues: undefined,
    statusCode: status,
  });
}
