// What a failed command prints and the status it exits with: one line, never a stack trace, and a status per kind
// of failure so that a deploy script or supervisor can tell "try again later" (the database is not up, a lock was
// held) from "a person must act" (a login refused, a migration failed, a newer database). docs/upgrading.md lists
// them for `chatd migrate`; docs/workers.md for the long-running commands.
import { isConnectionError } from "../db/pool.ts";
import { EXIT_SCHEMA_AHEAD, SchemaAheadError } from "../db/schema-contract.ts";
import { LockTimeoutError } from "../db/migrate.ts";
import { UserFileError } from "./user-files.ts";

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
/** The database did not answer (refused, unreachable, starting up, full), within CHATD_DB_WAIT_SECONDS if any. */
export const EXIT_UNREACHABLE = 5;
/** The server refused the login or the database does not exist: the connection string or the role is wrong. */
export const EXIT_LOGIN_REFUSED = 6;
/** `chatd migrate` gave up waiting for a lock another transaction held; nothing was applied. */
export const EXIT_LOCK_TIMEOUT = 7;
/** A migration or sql/ file failed; nothing was applied. */
export const EXIT_STATEMENT_FAILED = 8;
/** The login lacks a privilege the step needs (42501). */
export const EXIT_NOT_PERMITTED = 9;

export interface Failure {
  line: string;
  status: number;
}

function sqlStateOf(error: unknown): string | undefined {
  for (let current = error; current != null; current = (current as { cause?: unknown }).cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}

/** The connection error in `error`'s cause chain, if any. */
function connectionFailure(error: unknown): unknown {
  for (let current = error; current != null; current = (current as { cause?: unknown }).cause) {
    if (isConnectionError(current)) return current;
  }
  return undefined;
}

export function describeFailure(error: unknown): Failure {
  const message = messageOf(error);
  if (error instanceof UserFileError) return { line: message, status: EXIT_USAGE };
  if (error instanceof SchemaAheadError) return { line: message, status: EXIT_SCHEMA_AHEAD };
  if (error instanceof LockTimeoutError) return { line: message, status: EXIT_LOCK_TIMEOUT };
  const lost = connectionFailure(error);
  if (lost !== undefined) {
    const detail = messageOf(lost);
    return { line: `database unreachable: ${message}${detail !== message ? ` (${detail})` : ""}`, status: EXIT_UNREACHABLE };
  }
  const state = sqlStateOf(error);
  if (state?.startsWith("28") || state === "3D000") return { line: `the database refused the login: ${message}`, status: EXIT_LOGIN_REFUSED };
  if (state === "42501") return { line: message, status: EXIT_NOT_PERMITTED };
  if (state !== undefined) return { line: `${message} (SQLSTATE ${state})`, status: EXIT_STATEMENT_FAILED };
  return { line: message, status: EXIT_FAILED };
}
