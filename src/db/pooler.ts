// chatd behind a transaction-mode pooler (PgBouncer `pool_mode = transaction`): consecutive transactions of one
// client may run on different server connections, so nothing may rely on session state there. Three things do:
// the run-time role as a startup option (PgBouncer refuses `options`: 08P01), named prepared statements (parsed on
// one server connection, missing on the next: 26000, or already there: 42P05), and LISTEN and session advisory locks
// (silently lost, or held by a connection other clients share). With CHATD_DATABASE_POOLER=transaction the pooled
// connections send no startup option (the pooler's login itself works as the run-time role: docs/high-availability.md)
// and no statement names, and everything needing a session goes to CHATD_DIRECT_DATABASE_URL instead.
import { connectionParameter, withParameters } from "./connection-string.ts";

export type PoolerMode = "session" | "transaction";

/** CHATD_DATABASE_POOLER: `session` (the default: direct connections or a session-mode pooler) or `transaction`. */
export function poolerMode(env: NodeJS.ProcessEnv = process.env): PoolerMode {
  const raw = env.CHATD_DATABASE_POOLER ?? "";
  if (raw === "" || raw === "session") return "session";
  if (raw === "transaction") return "transaction";
  throw new Error(`CHATD_DATABASE_POOLER: session or transaction is required (got ${raw})`);
}

/**
 * Where a connection that needs a session (LISTEN, `chatd migrate` and its advisory lock, Graphile Worker's queue
 * pool, operator commands) goes for a part of chatd whose pooled connection string is `pooledUrl`: in transaction
 * mode CHATD_DIRECT_DATABASE_URL's server and database with `pooledUrl`'s user and password (each part keeps its own
 * login: the pooler passes the same login to PostgreSQL), else `pooledUrl` itself.
 */
export function directUrl(pooledUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  if (poolerMode(env) !== "transaction") return pooledUrl;
  const direct = env.CHATD_DIRECT_DATABASE_URL;
  if (!direct) throw new Error("CHATD_DATABASE_POOLER=transaction needs CHATD_DIRECT_DATABASE_URL (LISTEN and migrations bypass the pooler)");
  const user = connectionParameter(pooledUrl, "user");
  if (user == null) return direct;
  return withParameters(direct, { user, password: connectionParameter(pooledUrl, "password") ?? null }, { drop: "userinfo" });
}
