// One mapping from refusals to GraphQL errors, used for PostgreSQL errors (through grafserv's maskError) and for
// the checks the API runs before calling SQL, so that a refusal looks the same whichever layer raised it:
// `extensions.code` from the registry and `extensions.validations: [{field, detail}]` for field errors.
import { isSafeError, SafeError } from "postgraphile/grafast";
import { GraphQLError } from "postgraphile/graphql";
import { isConnectionError } from "../db/pool.ts";
import { logger } from "../log.ts";
import { ERROR_CODES } from "./error-codes.ts";

export interface Validation {
  field: string;
  detail: string;
}

export interface Refusal {
  sqlState: string;
  message: string;
  /** The pg error's `column`: the field path for field errors. */
  column?: string | undefined;
  detail?: string | undefined;
}

/** The client-facing error for a registered SQLSTATE, or null when the code is not registered. */
export function refusalError(refusal: Refusal, validations?: Validation[]): SafeError | null {
  const registered = ERROR_CODES[refusal.sqlState];
  if (!registered) return null;
  const field = refusal.column ?? (registered.field === "column" ? null : registered.field);
  const list = validations ?? (field === null ? [] : [{ field, detail: refusal.detail ?? refusal.message }]);
  return new SafeError(refusal.message, list.length > 0 ? { code: registered.code, validations: list } : { code: registered.code });
}

/** A refusal raised by the API itself with the field errors of the validator (all of them, in order). */
export function fieldRefusal(sqlState: string, validations: Validation[]): SafeError {
  const first = validations[0] ?? { field: "response_format", detail: "is invalid" };
  const error = refusalError({ sqlState, message: `${first.field} ${first.detail}`, column: first.field }, validations);
  if (!error) throw new Error(`unregistered SQLSTATE ${sqlState}`);
  return error;
}

interface PgLikeError {
  code: string;
  message: string;
  column?: string;
  detail?: string;
}

function isPgError(error: unknown): error is PgLikeError {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    && (error as { code: string }).code.length === 5 && typeof (error as { severity?: unknown }).severity === "string";
}

/**
 * Standard SQLSTATEs that bad input alone raises before any chatd function runs: PostgreSQL cannot store U+0000
 * in jsonb (22P05) or text (22021). Refusals, not server faults.
 */
const INPUT_SQLSTATES: Readonly<Record<string, string>> = {
  "22P05": "the input contains U+0000 (a NUL character), which cannot be stored",
  "22021": "the input contains U+0000 (a NUL character) or a byte sequence that is not UTF-8",
};

/** Connection-class refusals that prove the statement was not applied: the server was not reached, was starting,
 * full, or not the primary (it refused the write). After any other connection error (the connection died after the
 * statement was sent) the statement may have committed. */
const NOT_APPLIED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "57P03", "53300",
  "08001", "08004", "25006", "0A000"]);

/** The typed answer to a lost database connection (a restart, a failover): retryable, never INTERNAL. `outcome` is
 * "not_applied" when the refusal proves nothing was written, else "unknown": a write may have committed, and only a
 * retry with the same idempotency key is safe (it returns the first result instead of a second one). */
export function unavailableExtensions(error: unknown): { code: "UNAVAILABLE"; retryable: true; outcome: "unknown" | "not_applied" } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: "UNAVAILABLE", retryable: true, outcome: typeof code === "string" && NOT_APPLIED.has(code) ? "not_applied" : "unknown" };
}

export const UNAVAILABLE_MESSAGE = "the database is unavailable (restarting or failing over); retry, with the same idempotency key for a write";

let counter = 0;

/**
 * grafserv's maskError: GraphQL errors and SafeErrors pass; a PostgreSQL error with a registered SQLSTATE becomes
 * its registered refusal; everything else is replaced by an opaque message with an id that is logged server-side.
 */
export function maskError(error: GraphQLError): GraphQLError {
  const original = error.originalError;
  const wrap = (message: string, extensions: Record<string, unknown>) => new GraphQLError(message, {
    nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: original,
    extensions,
  });
  if (!original || original instanceof GraphQLError) return error;
  if (isSafeError(original)) return wrap(original.message, original.extensions ?? {});
  if (isPgError(original)) {
    const refusal = refusalError({ sqlState: original.code, message: original.message, column: original.column,
      detail: original.detail });
    if (refusal) return wrap(refusal.message, refusal.extensions ?? {});
    const input = INPUT_SQLSTATES[original.code];
    if (input) return wrap(input, { code: "INVALID_INPUT" });
  }
  if (isConnectionError(original)) return wrap(UNAVAILABLE_MESSAGE, unavailableExtensions(original));
  counter += 1;
  const errorId = `${process.pid.toString(36)}-${Date.now().toString(36)}-${counter}`;
  logger.error({ err: original, errorId, path: error.path }, "masked GraphQL error");
  return wrap(`An error occurred (id: ${errorId})`, { code: "INTERNAL", errorId });
}
