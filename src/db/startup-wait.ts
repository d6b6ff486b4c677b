// The start-up wait of `chatd worker`, `serve` and `start`: before anything touches the database (the schema gate
// included), the command waits for it up to CHATD_DB_WAIT_SECONDS, so that a process started before PostgreSQL (a
// boot, a container started beside its database, a failover) starts once the database is up instead of dying. One
// line when it has to wait, one when the database answers; a clear error, never a stack trace, when it gives up.
import pg from "pg";
import type { Logger } from "../log.ts";
import { DatabaseHealth, isConnectionError } from "./pool.ts";

export const DEFAULT_STARTUP_WAIT_SECONDS = 60;

export function startupWaitSeconds(raw = process.env.CHATD_DB_WAIT_SECONDS): number {
  if (raw == null || raw === "") return DEFAULT_STARTUP_WAIT_SECONDS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`CHATD_DB_WAIT_SECONDS: a number of seconds >= 0 is required (got ${raw})`);
  return seconds;
}

/** The database did not answer within the start-up wait; `cause` is the last connection error. */
export class DatabaseUnreachableError extends Error {
  constructor(seconds: number, cause: unknown) {
    super(`the database was not reachable within ${seconds} s (CHATD_DB_WAIT_SECONDS)`, { cause });
  }
}

/** Returns once a connection to `databaseUrl` opens and answers; retries connection errors only (DatabaseHealth). */
export async function waitForDatabase(databaseUrl: string, log: Logger, seconds = startupWaitSeconds()): Promise<void> {
  const health = new DatabaseHealth(log);
  health.waitUntil(Date.now() + seconds * 1000);
  try {
    await health.retry(async () => {
      const client = new pg.Client({ connectionString: databaseUrl, application_name: "chatd start-up" });
      // A connection lost after connect() fails the query below; without a listener it would end the process.
      client.on("error", () => undefined);
      try {
        await client.connect();
        await client.query("select 1");
      } finally {
        await client.end().catch(() => undefined);
      }
    });
  } catch (error) {
    throw isConnectionError(error) ? new DatabaseUnreachableError(seconds, error) : error;
  }
}
