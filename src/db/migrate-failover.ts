// `chatd migrate` and `chatd start` through a failover: a migration is one transaction (src/db/migrate.ts), so one
// that failed on its connection (a primary restarting, HAProxy still routing to a demoted node that answers 25006)
// committed nothing and is run again, with backoff, until it succeeds or CHATD_DB_WAIT_SECONDS have passed. Any
// other error is thrown at once.
import { backoffDelayMs, isConnectionError } from "./pool.ts";
import { migrate, type MigrateResult } from "./migrate.ts";

/** True when `error` or one of its causes (migrate wraps a migration's error with its file name) is a lost connection. */
function lostConnection(error: unknown): boolean {
  for (let e = error, depth = 0; e != null && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (isConnectionError(e)) return true;
  }
  return false;
}

export async function migrateThroughFailover(databaseUrl: string, log: (line: string) => void, waitSeconds: number,
  onWait: (error: unknown) => void): Promise<MigrateResult> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await migrate(databaseUrl, log);
    } catch (error) {
      if (!lostConnection(error) || Date.now() >= deadline) throw error;
      if (attempt === 1) onWait(error);
      await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(attempt)));
    }
  }
}
