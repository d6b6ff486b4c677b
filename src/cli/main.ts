// The `chatd` command. Each subcommand resolves the database the same way: DATABASE_URL, else embedded.
import { Command, InvalidArgumentError } from "commander";
import { resolveDatabase, type ResolvedDatabase } from "../db/database.ts";
import { migrateThroughFailover } from "../db/migrate-failover.ts";
import { createPool } from "../db/pool.ts";
import { directUrl } from "../db/pooler.ts";
import { workerDatabaseUrl } from "../db/run-time-roles.ts";
import { refuseIncompatibleSchema, reportSchemaStatus } from "../db/schema-gate.ts";
import { startupWaitSeconds, waitForDatabase } from "../db/startup-wait.ts";
import { format as logFormat, logger } from "../log.ts";
import { registerExperimentsCommand } from "./experiments-command.ts";
import { describeFailure } from "./exit-status.ts";
import { exitOnSignal, runUntilStopped } from "./lifecycle.ts";
import { registerSchemaCommand } from "./schema-command.ts";
import { startWorkerChild, WORKER_READY } from "./worker-child.ts";

const program = new Command("chatd").description("Durable agent chat with per-request structured output.");

function portOption(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("a port number (0-65535)");
  return port;
}

/** The database as the worker connects to it: its schema check then needs no owner's login (migration 0052). */
const asWorker = (db: ResolvedDatabase): ResolvedDatabase => ({ ...db, url: workerDatabaseUrl(db.url) });

/** Stopped when a command fails: an embedded server must not outlive its command. */
let opened: ResolvedDatabase | undefined;

/** One line when a migration lost its connection (a failover): it is run again until CHATD_DB_WAIT_SECONDS. */
const migrateWaits = (error: unknown) => logger.warn({ code: (error as { code?: unknown }).code },
  "migration lost its database connection: running it again until the database is writable (CHATD_DB_WAIT_SECONDS)");

async function openDatabase(): Promise<ResolvedDatabase> {
  const db = await resolveDatabase((line) => logger.debug(line));
  opened = db;
  exitOnSignal(db.stop);
  return db;
}

/**
 * `worker`, `serve` and `start`: the database, once it answers (src/db/startup-wait.ts). Nothing touches it before,
 * the schema gate included, so a process started before its database waits instead of dying.
 */
async function openReachableDatabase(asRole: (db: ResolvedDatabase) => ResolvedDatabase = (db) => db): Promise<ResolvedDatabase> {
  const db = await openDatabase();
  await waitForDatabase(asRole(db).url, logger);
  return db;
}

interface ServeOptions {
  port: number;
  host: string;
}

async function startApi(db: ResolvedDatabase, options: ServeOptions) {
  const development = process.env.NODE_ENV !== "production";
  // The owner's login serves start-up only (chatd_api's password when chatd manages it, development's dev user) and
  // is closed once the API listens: with CHATD_API_DATABASE_URL in production, the API never opens it.
  const owner = development || !process.env.CHATD_API_DATABASE_URL
    ? createPool({ connectionString: db.url, max: 2 }, logger, "start-up") : undefined;
  // Loaded on demand: PostGraphile reads GRAPHILE_ENV when its modules load, and one-shot commands need none of it.
  process.env.GRAPHILE_ENV ??= development ? "development" : "production";
  try {
    const { startApi } = await import("../api/server.ts");
    const api = await startApi({ ...(owner != null ? { pool: owner } : {}), port: options.port, host: options.host, development });
    if (api.developmentToken != null) announceToken(api.developmentToken);
    return api;
  } finally {
    await owner?.end();
  }
}

/** The development token, for copying: a line of its own on a terminal, a field of the JSON line otherwise. */
function announceToken(token: string): void {
  const message = "development token for user dev (header Authorization: Bearer <token>; `chatd token --user NAME` mints others)";
  if (logFormat === "json") {
    logger.info({ user: "dev", token }, message);
    return;
  }
  logger.info(`${message}:`);
  process.stderr.write(`${token}\n`);
}

/** `chatd start`: migrate, the worker in a supervised child process, the API in this one. */
async function start(options: ServeOptions & { concurrency: number; metricsPort: number }): Promise<void> {
  const db = await openReachableDatabase();
  const stops: (() => Promise<void>)[] = [db.stop];
  // A database behind this build is migrated; one ahead of it (a newer release's) is refused.
  await refuseIncompatibleSchema(db, (message) => logger.error(message), { allowBehind: true });
  const migrated = await migrateThroughFailover(directUrl(db.url), (line) => logger.debug(line), startupWaitSeconds(), migrateWaits);
  if (migrated.migrationsApplied.length + migrated.sqlFilesApplied.length > 0) {
    logger.info({ migrations: migrated.migrationsApplied.length, sql_files: migrated.sqlFilesApplied.length }, "database migrated");
  }
  // The worker's own login, when there is one, is the only one its process holds: the owner's stays here.
  const workerUrl = process.env.CHATD_WORKER_DATABASE_URL || db.url;
  const worker = await startWorkerChild(workerUrl, ["--concurrency", String(options.concurrency), "--metrics-port", String(options.metricsPort)]);
  const api = await startApi(db, options).catch(async (error: unknown) => {
    await worker.stop();
    throw error;
  });
  // The API and the worker stop side by side, then the database.
  stops.push(async () => {
    await Promise.all([api.close(), worker.stop()]);
  });
  logger.info({ url: api.url, health: `${api.url}/health` }, "chatd is running");
  runUntilStopped(stops);
}

/** `chatd serve`: the API and the worker in this one process (development; it does not migrate). */
async function serve(options: ServeOptions): Promise<void> {
  const db = await openReachableDatabase(asWorker);
  const stops: (() => Promise<void>)[] = [db.stop];
  await refuseIncompatibleSchema(asWorker(db), (message) => logger.error(message));
  const { startWorker } = await import("../../worker/index.ts");
  const worker = await startWorker({ databaseUrl: db.url, logger });
  stops.push(worker.stop);
  const api = await startApi(db, options);
  stops.push(api.close);
  logger.info({ url: api.url, health: `${api.url}/health` }, "chatd is running");
  runUntilStopped(stops);
}

program
  .command("migrate")
  .description("apply migrations/ and the repeatable sql/ definitions (idempotent, safe to run concurrently)")
  .option("--check", "report pending work without applying anything (exit code 3: pending, 4: the database is newer)")
  .action(async (options: { check?: boolean }) => {
    const db = await openDatabase();
    try {
      if (options.check) {
        process.exitCode = await reportSchemaStatus(db.url, (line) => console.log(line));
        return;
      }
      const result = await migrateThroughFailover(directUrl(db.url), (line) => logger.debug(line), startupWaitSeconds(), migrateWaits);
      console.log(`migrations applied: ${result.migrationsApplied.length}, sql/ files applied: ${result.sqlFilesApplied.length}`);
    } finally {
      await db.stop();
    }
  });

const serveOptions = (command: Command) =>
  command
    .option("-p, --port <port>", "HTTP port", portOption, Number(process.env.PORT ?? 8787))
    .option("--host <host>", "interface to listen on", process.env.HOST ?? "127.0.0.1");

const concurrencyOption = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a whole number of at least 1");
  return n;
};
const metricsPortDefault = Number(process.env.CHATD_METRICS_PORT ?? 9464);

serveOptions(program.command("serve").description("run the API and the worker in one process (development; does not migrate)"))
  .action((options: ServeOptions) => serve(options));

serveOptions(program.command("start").description("migrate, then run the API and the worker (a supervised child process)"))
  .option("-c, --concurrency <n>", "chats the worker runs at once", concurrencyOption, 4)
  .option("--metrics-port <port>", "the worker's Prometheus /metrics port", portOption, metricsPortDefault)
  .action((options: ServeOptions & { concurrency: number; metricsPort: number }) => start(options));

program
  .command("worker")
  .description("run the worker alone")
  .option("-c, --concurrency <n>", "chats run at once", concurrencyOption, 4)
  .option("--metrics-port <port>", "serve Prometheus /metrics on this port", portOption, metricsPortDefault)
  .option("--pool-size <n>", "database connections of the worker in all (default: CHATD_WORKER_POOL_SIZE, else 32)", Number)
  .action(async (options: { concurrency: number; metricsPort: number; poolSize?: number }) => {
    const db = await openReachableDatabase(asWorker);
    await refuseIncompatibleSchema(asWorker(db), (message) => logger.error(message));
    const { startWorker } = await import("../../worker/index.ts");
    const worker = await startWorker({ databaseUrl: db.url, logger, concurrency: options.concurrency, metricsPort: options.metricsPort,
      ...(options.poolSize != null ? { poolSize: options.poolSize } : {}) });
    // Started by `chatd start` (worker-child.ts): report readiness, and stop when the parent is gone.
    const stop = runUntilStopped([db.stop, worker.stop], { quiet: process.send != null });
    if (process.send != null) {
      process.send(WORKER_READY);
      process.on("disconnect", () => stop("parent process exited"));
    }
  });

registerExperimentsCommand(program, openDatabase);
registerSchemaCommand(program);
(await import("./token-command.ts")).registerTokenCommand(program, openDatabase);
(await import("./batch-command.ts")).registerBatchCommand(program, openDatabase);
(await import("./ops-command.ts")).registerOpsCommand(program, openDatabase);
(await import("./psql-command.ts")).registerPsqlCommand(program, openDatabase);
(await import("./webhooks-command.ts")).registerWebhooksCommand(program, openDatabase);

let longRunning = false;
program.hook("preAction", (_program, action) => {
  longRunning = ["serve", "start", "worker"].includes(action.name());
});
try {
  await program.parseAsync(process.argv);
} catch (error) {
  // One line and a status per kind of failure (src/cli/exit-status.ts), never a stack trace; the cause at debug.
  const failure = describeFailure(error);
  if (longRunning) logger.error({ exit_status: failure.status }, failure.line);
  else process.stderr.write(`chatd: ${failure.line}\n`);
  logger.debug({ err: error }, "the failure in full");
  await opened?.stop().catch(() => undefined);
  process.exit(failure.status);
}
// One-shot commands exit explicitly: an embedded PostgreSQL's exit hook would otherwise turn exitCode into 0.
if (!longRunning) process.exit(process.exitCode ?? 0);
