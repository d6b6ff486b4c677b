// `chatd migrate`: Graphile Worker's own schema migrations (which chatd does not control, and which the running
// release works with), then in ONE transaction chatd's versioned migrations (node-pg-migrate), the repeatable sql/
// definitions that changed, the database-level hardening and the schema contract: either the new release's schema
// commits whole, or nothing of it does and the previous release keeps working on what it had. All of it runs under
// one advisory lock so that several processes starting at once apply everything exactly once. Every lock the run
// waits for is bounded on the server (lock_timeout), so a deploy stuck behind a long transaction gives up and
// retries instead of queueing clients behind it, and stops waiting even when its own process is gone.
import pg from "pg";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";
import { hardenDatabase } from "./database-hardening.ts";
import { chatdRelations, deadlockTimeoutMs, lockAhead } from "./migrate-locks.ts";
import { KEEPALIVE } from "./pool.ts";
import { applyStatements, changedObjects, objectFingerprints, readSqlFiles, recordedStatements, statementsOf, statementsToApply } from "./repeatable.ts";
import { MIGRATIONS_DIR, readContract, SchemaAheadError, targetContract, writeContract } from "./schema-contract.ts";

/** Arbitrary constant shared by every chatd process; distinct from node-pg-migrate's own lock value. */
const MIGRATE_LOCK_KEY = 7_010_420_001;
/** lock_not_available (lock_timeout) and deadlock_detected: the transaction rolled back and may be retried. */
const RETRYABLE = new Set(["55P03", "40P01"]);

export interface MigrateResult {
  migrationsApplied: string[];
  /** Repeatable files with a statement applied (src/db/repeatable.ts says which statements a run applies). */
  sqlFilesApplied: string[];
  /** How many statements of the sql/ files were applied. */
  sqlStatementsApplied: number;
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

/** A lock wait timed out on every try: another transaction held what the migration needs; nothing was applied. */
export class LockTimeoutError extends Error {
  /** lock_not_available, the SQLSTATE of the last try. */
  readonly code = "55P03";
  constructor(attempts: number, lockTimeoutMs: number, cause: unknown) {
    super(`gave up after ${attempts} tries: another transaction held a lock the migration needs for longer than ` +
      `lock_timeout (${lockTimeoutMs} ms); nothing was applied, run \`chatd migrate\` again once it ends`, { cause });
  }
}

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
      if (code === undefined || !RETRYABLE.has(code)) throw error;
      if (attempt >= options.attempts) throw code === "55P03" ? new LockTimeoutError(attempt, options.lockTimeoutMs, error) : error;
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

/**
 * node-pg-migrate's runner wraps its migrations in BEGIN ... COMMIT; inside migrate()'s own transaction those are
 * left out (its ROLLBACK too: migrate() rolls back). A migration that would break the transaction is refused.
 */
function inOpenTransaction(client: pg.ClientBase): Pick<pg.ClientBase, "query"> {
  return {
    query: ((text: unknown, values?: unknown) => {
      if (text === "BEGIN" || text === "COMMIT" || text === "ROLLBACK") return Promise.resolve({ rows: [], rowCount: null });
      if (text === "BEGIN;" || text === "COMMIT;") {
        return Promise.reject(new Error("a migration that cannot run in a transaction: chatd's migrations commit as one"));
      }
      return client.query(text as string, values as unknown[]);
    }) as pg.ClientBase["query"],
  };
}

/** Runs the pending migrations in the caller's open transaction; an error names the migration that failed. */
async function applyMigrations(client: pg.ClientBase): Promise<string[]> {
  // Loaded only when there is work for it: most runs have none, and it is the largest import of the command.
  const { runner } = await import("node-pg-migrate");
  let current = "";
  try {
    const applied = await runner({
      dbClient: inOpenTransaction(client) as pg.ClientBase,
      dir: MIGRATIONS_DIR,
      migrationsTable: "pgmigrations",
      migrationsSchema: "chatd_meta",
      direction: "up",
      count: Infinity,
      checkOrder: true,
      singleTransaction: true,
      noLock: true,
      log: (line: string) => {
        current = /### MIGRATION (\S+) \(UP\) ###/.exec(line)?.[1] ?? current;
      },
    });
    return applied.map((migration) => migration.name);
  } catch (error) {
    throw current === "" ? error
      : new Error(`migrations/${current}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {},
  migrateOptions: MigrateOptions = {}): Promise<MigrateResult> {
  const options = { ...defaults, ...migrateOptions };
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "chatd migrate", ...KEEPALIVE });
  // A connection lost between statements fails the next one; without a listener it would end the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    // The advisory lock only ever waits for another `chatd migrate`, which blocks no client: no lock_timeout yet.
    await client.query("set client_min_messages = warning");
    await client.query("select pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    await configureSession(client, options);

    const target = targetContract();
    const before = await withRetry(options, log, "migrate", () => readContract(client));
    if (before.unknownMigrations.length > 0) throw new SchemaAheadError(before.unknownMigrations);
    // The queue's own schema, in its own transaction (Graphile Worker's migrations are its own): the sql/
    // definitions call graphile_worker.add_job. Its migrations keep the functions the running release calls.
    await runWorkerMigrations({ connectionString: databaseUrl, logger: quietLogger });

    const files = readSqlFiles();
    const statements = statementsOf(files);
    const result = await withRetry(options, log, "migrate", async () => {
      await client.query("begin");
      try {
        await client.query("create schema if not exists chatd_meta");
        await client.query(`create table if not exists chatd_meta.repeatable_sql (
          name text primary key, sha256 text not null, applied_at timestamptz not null default now())`);
        const recorded = await readContract(client);
        if (recorded.unknownMigrations.length > 0) throw new SchemaAheadError(recorded.unknownMigrations);
        // What the migrations of this run change, the sql/ statements defining it apply again (a migration may
        // drop, rename or stub what a file defines).
        const pending = recorded.pendingMigrations.length > 0;
        // Every lock the run needs, taken up front within lock_timeout, in steps well inside the server's
        // deadlock_timeout (src/db/migrate-locks.ts): with migrations, any relation of chatd's may change; without,
        // only the views re-created.
        const lockStepMs = Math.min(50, (await deadlockTimeoutMs(client)) / 4);
        if (pending) await lockAhead(client, await chatdRelations(client), options.lockTimeoutMs, lockStepMs);
        const fingerprintsBefore = pending ? await objectFingerprints(client) : new Map<string, string>();
        const migrationsApplied = pending ? await applyMigrations(client) : [];
        const touched = pending ? changedObjects(fingerprintsBefore, await objectFingerprints(client)) : new Set<string>();
        const checksums = await recordedStatements(client);
        const toApply = statementsToApply(statements, checksums, touched, migrationsApplied.length > 0);
        if (!pending) {
          await lockAhead(client, toApply.filter((s) => s.role === "define" && s.object.startsWith("relation "))
            .map((s) => s.object.slice("relation ".length)), options.lockTimeoutMs, lockStepMs);
        }
        const sqlFilesApplied = await applyStatements(client, toApply, files, statements, checksums);
        if (recorded.migration !== target.migration || recorded.sqlSha256 !== target.sqlSha256) {
          await writeContract(client, target);
        }
        await hardenDatabase(client);
        await client.query("commit");
        return { migrationsApplied, sqlFilesApplied, sqlStatementsApplied: toApply.length };
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      }
    });
    for (const name of result.migrationsApplied) log(`applied migration ${name}`);
    if (result.sqlStatementsApplied > 0) {
      log(`applied ${result.sqlStatementsApplied} statements of ${result.sqlFilesApplied.length} repeatable sql/ files`);
    }
    return result;
  } finally {
    await client.query("select pg_advisory_unlock_all()").catch(() => {});
    await client.end().catch(() => {});
  }
}
