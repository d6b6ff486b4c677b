// A pg.Pool whose failing connections are logged, never thrown. pg emits 'error' on a client whose connection fails
// between queries (idle in the pool or checked out), and pg-pool re-emits an idle client's error on the pool; an
// 'error' event without a listener ends the process. A database restart, a terminated backend or the embedded
// server stopping first at shutdown must cost the connection, not the service: the pool opens a new one for the
// next query, and a checked-out client's next query fails.
import pg from "pg";
import type { Logger } from "../log.ts";

export function createPool(options: { connectionString: string; max: number }, log: Logger, purpose: string): pg.Pool {
  const pool = new pg.Pool(options);
  pool.on("connect", (client) => client.on("error", (error) => log.warn({ err: error, pool: purpose }, "database connection failed")));
  // The client's own listener above has logged it already.
  pool.on("error", (error) => log.debug({ err: error, pool: purpose }, "idle connection removed from the pool"));
  return pool;
}
