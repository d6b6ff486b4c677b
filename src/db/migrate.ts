// `chatd migrate`: versioned DDL through node-pg-migrate, then the repeatable `sql/` definitions that changed, all
// under one advisory lock so that several processes starting at once apply everything exactly once. Every lock the
// run waits for is bounded on the server (lock_timeout), so a deploy stuck behind a long transaction gives up and
// retries instead of queueing clients behind it, and stops waiting even when its own process is gone.
import pg from "pg";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";
import { hardenDatabase } from "./database-hardening.ts";
import { applyFiles, filesToApply, readSqlFiles, recordedChecksums } from "./repeatable.ts";
import { MIGRATIONS_DIR, readContract, SchemaAheadError, targetContract, writeContract } from "./schema-contract.ts";

/** Arbitrary constant shared by every chatd process; distinct from node-pg-migrate's own lock value. */
const MIGRATE_LOCK_KEY = 7_010_420_001;
/** lock_not_available (lock_timeout) and deadlock_detected: the transaction rolled back and may be retried. */
const RETRYABLE = new Set(["55P03", "40P01"]);

export interface MigrateResult {
  migrationsApplied: string[];
  /** Repeatable files re-applied: the changed ones and those after them, or all of them after a migration. */
  sqlFilesApplied: string[];
}

export interface MigrateOptions {
  /** Longest wait for any one lock before the transaction gives up and is retried (server-side). */
  lockTimeoutMs?: number;
  /** Longest any one statement may run (server-side). */
  statementTimeoutMs?: number;
  /** Tries per transaction when a lock wait times out; the wait before try n is n * retryDelayMs. */
  attempts?: number;
  retryDelayMs?: number;
}

const defaults: Required<MigrateOptions> = { lockTimeoutMs: 2000, statementTimeoutMs: 600_000, attempts: 5, retryDelayMs: 1000 };

const quietLogger = new Logger(() => () => {});

/** The SQLSTATE of a failed statement, also through the error naming its sql/ file (as its cause). */
function sqlState(error: unknown): string | undefined {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: unknown };
  if (typeof code === "string") return code;
  return cause === undefined ? undefined : sqlState(cause);
}

async function withRetry<T>(options: Required<MigrateOptions>, log: (line: string) => void, what: string,
  fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (error) {
      const code = sqlState(error);
      if (code === undefined || !RETRYABLE.has(code) || attempt >= options.attempts) throw error;
      log(`${what}: ${code === "55P03" ? "lock wait timed out" : "deadlock"}; retrying (attempt ${attempt + 1} of ${options.attempts})`);
      await new Promise((resolve) => setTimeout(resolve, attempt * options.retryDelayMs));
    }
  }
}

/**
 * Session settings of the migration's own connection. The timeouts end a wait inside the server, whatever the
 * client does; client_connection_check_interval also ends a statement whose client has gone (a killed deploy).
 */
async function configureSession(client: pg.ClientBase, options: Required<MigrateOptions>): Promise<void> {
  await client.query(
    `select set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false),
            set_config('client_connection_check_interval', '1s', false)`,
    [`${options.lockTimeoutMs}ms`, `${options.statementTimeoutMs}ms`]);
}

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {},
  migrateOptions: MigrateOptions = {}): Promise<MigrateResult> {
  const options = { ...defaults, ...migrateOptions };
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "chatd migrate" });
  await client.connect();
  try {
    // The advisory lock only ever waits for another `chatd migrate`, which blocks no client: no lock_timeout yet.
    await client.query("set client_min_messages = warning");
    await client.query("select pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    await configureSession(client, options);
    await client.query("create schema if not exists chatd_meta");
    await client.query(`create table if not exists chatd_meta.repeatable_sql (
      name text primary key, sha256 text not null, applied_at timestamptz not null default now())`);

    const target = targetContract();
    const recorded = await readContract(client);
    if (recorded.unknownMigrations.length > 0) throw new SchemaAheadError(recorded.unknownMigrations);

    let migrationsApplied: string[] = [];
    if (recorded.pendingMigrations.length > 0) {
      // Loaded only when there is work for it: most runs have none, and it is the largest import of the command.
      const { runner } = await import("node-pg-migrate");
      const applied = await withRetry(options, log, "migrations", () => runner({
        dbClient: client,
        dir: MIGRATIONS_DIR,
        migrationsTable: "pgmigrations",
        migrationsSchema: "chatd_meta",
        direction: "up",
        count: Infinity,
        checkOrder: true,
        singleTransaction: true,
        noLock: true,
        log: () => {},
      }));
      migrationsApplied = applied.map((migration) => migration.name);
      for (const name of migrationsApplied) log(`applied migration ${name}`);
    }
    // The queue's own schema: the repeatable definitions call graphile_worker.add_job.
    await runWorkerMigrations({ connectionString: databaseUrl, logger: quietLogger });

    const files = readSqlFiles();
    const toApply = filesToApply(files, await recordedChecksums(client), migrationsApplied.length > 0);
    const contractChanged = recorded.migration !== target.migration || recorded.sqlSha256 !== target.sqlSha256;
    if (toApply.length > 0 || contractChanged) {
      await withRetry(options, log, "sql/", async () => {
        await client.query("begin");
        try {
          await applyFiles(client, toApply, files);
          await writeContract(client, target);
          await client.query("commit");
        } catch (error) {
          await client.query("rollback");
          throw error;
        }
      });
    }
    if (toApply.length > 0) log(`applied ${toApply.length} repeatable sql/ files`);
    await hardenDatabase(client);
    return { migrationsApplied, sqlFilesApplied: toApply.map((file) => file.name) };
  } finally {
    await client.query("select pg_advisory_unlock_all()").catch(() => {});
    await client.end();
  }
}
