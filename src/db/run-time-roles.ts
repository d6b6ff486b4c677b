// Which database role each part of chatd works as. Only `chatd migrate` needs the owner of chatd's objects; the
// worker works as chat_worker, the API as chatd_api switching to chat_user or chat_anonymous per request
// (src/api/api-role.ts), and the operator's commands (`chatd ops`, `batch`, `token`) as chat_operator. The role is set by the connection itself (the startup option `-c role=...`), so every
// connection of a pool, Graphile Worker's and the LISTEN connection included, has it before its first query, and a
// login that may not take the role fails to connect instead of working with its own rights.
import { connectionParameter, withParameters } from "./connection-string.ts";

export const WORKER_ROLE = "chat_worker";
export const OPERATOR_ROLE = "chat_operator";

/**
 * `databaseUrl` whose connections work as `role` (the login must be that role, a member of it, or a superuser). Any
 * connection string pg accepts (src/db/connection-string.ts); the startup options it or PGOPTIONS gives are kept.
 */
export function withRole(databaseUrl: string, role: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(role)) throw new Error(`not a plain role name: ${role}`);
  const given = connectionParameter(databaseUrl, "options") ?? process.env.PGOPTIONS;
  return withParameters(databaseUrl, { options: [given, `-c role=${role}`].filter(Boolean).join(" ") });
}

/**
 * The worker's connection string: CHATD_WORKER_DATABASE_URL when set (a login provisioned for the worker, see
 * docs/security.md), else DATABASE_URL; either way working as chat_worker.
 */
export function workerDatabaseUrl(databaseUrl: string): string {
  return withRole(process.env.CHATD_WORKER_DATABASE_URL || databaseUrl, WORKER_ROLE);
}
