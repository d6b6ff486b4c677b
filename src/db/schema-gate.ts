// The start gate of `chatd serve`, `start` and `worker`, and the report of `chatd migrate --check`: a process
// built for one schema contract never runs against a database migrated to another (src/db/schema-contract.ts).
import { exitCodeOf, schemaStatus } from "./schema-contract.ts";

/**
 * Returns when the database is at this build's contract (or only behind it, with allowBehind: the caller migrates
 * first); otherwise logs why, stops the embedded server if any, and exits with EXIT_SCHEMA_BEHIND or _AHEAD.
 */
export async function refuseIncompatibleSchema(db: { url: string; stop(): Promise<void> }, log: (message: string) => void,
  options: { allowBehind?: boolean } = {}): Promise<void> {
  const status = await schemaStatus(db.url);
  if (status.state === "current" || (options.allowBehind && status.state === "behind")) return;
  log(`refusing to start: ${status.message}`);
  await db.stop();
  process.exit(exitCodeOf(status));
}

/** `chatd migrate --check`: what a migration would do, applying nothing. Returns the exit code (0: nothing to do). */
export async function reportSchemaStatus(databaseUrl: string, print: (line: string) => void): Promise<number> {
  const status = await schemaStatus(databaseUrl);
  print(`schema: ${status.state}${status.message ? ` (${status.message})` : ""}`);
  print(`migrations pending: ${status.pendingMigrations.length}${status.pendingMigrations.map((name) => `\n  ${name}`).join("")}`);
  print(`sql/ files to apply: ${status.pendingSqlFiles.length}${status.pendingSqlFiles.map((name) => `\n  ${name}`).join("")}`);
  return exitCodeOf(status);
}
