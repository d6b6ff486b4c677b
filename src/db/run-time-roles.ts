// Which database role each part of chatd works as. Only `chatd migrate` needs the owner of chatd's objects; the
// worker works as chat_worker, the API as chatd_api switching to chat_user or chat_anonymous per request
// (src/api/api-role.ts), and the operator's commands (`chatd ops`, `batch`, `token`) as chat_operator. The role is set by the connection itself (the startup option `-c role=...`), so every
// connection of a pool, Graphile Worker's and the LISTEN connection included, has it before its first query, and a
// login that may not take the role fails to connect instead of working with its own rights.
import type pg from "pg";
import { withStartupSettings } from "./connection-string.ts";
import { directUrl, poolerMode } from "./pooler.ts";

export const WORKER_ROLE = "chat_worker";
export const OPERATOR_ROLE = "chat_operator";

/**
 * `databaseUrl` whose connections work as `role` (the login must be that role, a member of it, or a superuser). Any
 * connection string pg accepts (src/db/connection-string.ts); the startup options it or PGOPTIONS gives are kept.
 */
export function withRole(databaseUrl: string, role: string): string {
  return withStartupSettings(databaseUrl, { role });
}

/**
 * The worker's connection string: CHATD_WORKER_DATABASE_URL when set (a login provisioned for the worker, see
 * docs/security.md), else DATABASE_URL; either way working as chat_worker. Behind a transaction-mode pooler
 * (src/db/pooler.ts), which refuses the startup option, the login itself works as chat_worker (`alter role ... set
 * role chat_worker`), checked by requireRole at start-up.
 */
export function workerDatabaseUrl(databaseUrl: string): string {
  const url = workerLogin(databaseUrl);
  return poolerMode() === "transaction" ? url : withRole(url, WORKER_ROLE);
}

/** The worker's connections that need a session (LISTEN, Graphile Worker's queue pool): direct, as chat_worker. */
export function workerSessionUrl(databaseUrl: string): string {
  return withRole(directUrl(workerLogin(databaseUrl)), WORKER_ROLE);
}

/** The worker's login: CHATD_WORKER_DATABASE_URL when set, else DATABASE_URL's. */
function workerLogin(databaseUrl: string): string {
  return process.env.CHATD_WORKER_DATABASE_URL || databaseUrl;
}

/** Refuses to go on when `pool`'s connections do not work as `role` (a pooled login not set up as docs say). */
export async function requireRole(pool: pg.Pool, role: string): Promise<void> {
  const { rows } = await pool.query<{ current_user: string; session_user: string }>("select current_user, session_user");
  const row = rows[0];
  if (row?.current_user !== role) {
    throw new Error(`CHATD_DATABASE_POOLER=transaction: login ${row?.session_user ?? "?"} works as ${row?.current_user ?? "?"}, ` +
      `not ${role}: \`alter role ${row?.session_user ?? "<login>"} set role ${role}\` (docs/high-availability.md)`);
  }
}
