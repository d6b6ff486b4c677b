// The `chatd` command. Each subcommand resolves the database the same way: DATABASE_URL, else embedded.
import { Command, InvalidArgumentError } from "commander";
import { resolveDatabase, type ResolvedDatabase } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { createPool } from "../db/pool.ts";
import { SchemaAheadError } from "../db/schema-contract.ts";
import { refuseIncompatibleSchema, reportSchemaStatus } from "../db/schema-gate.ts";
import { logger } from "../log.ts";
import { registerExperimentsCommand } from "./experiments-command.ts";
import { registerSchemaCommand } from "./schema-command.ts";

const program = new Command("chatd").description("Durable agent chat with per-request structured output.");

function portOption(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("a port number (0-65535)");
  return port;
}

async function openDatabase(): Promise<ResolvedDatabase> {
  const db = await resolveDatabase((line) => logger.debug(line));
  if (db.embedded) logger.info("using the embedded PostgreSQL (set DATABASE_URL to use your own server)");
  return db;
}

/** Runs until SIGINT/SIGTERM, then stops each part in reverse order. */
function untilSignal(stops: (() => Promise<void>)[]): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (error) {
        logger.error({ err: error }, "error during shutdown");
      }
    }
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

async function serve(options: { port: number; host: string; worker: boolean; migrate: boolean }): Promise<void> {
  const db = await openDatabase();
  const stops: (() => Promise<void>)[] = [db.stop];
  await refuseIncompatibleSchema(db, (message) => logger.error(message), { allowBehind: options.migrate });
  if (options.migrate) await migrate(db.url, (line) => logger.info(line));
  const pool = createPool({ connectionString: db.url, max: 10 }, logger, "service");
  stops.push(() => pool.end());
  if (options.worker) {
    const { startWorker } = await import("../../worker/index.ts");
    const worker = await startWorker({ databaseUrl: db.url, logger });
    stops.push(worker.stop);
  }
  // Loaded on demand: PostGraphile reads GRAPHILE_ENV when its modules load, and one-shot commands need none of it.
  process.env.GRAPHILE_ENV ??= process.env.NODE_ENV === "production" ? "production" : "development";
  const { startApi } = await import("../api/server.ts");
  const api = await startApi({ pool, port: options.port, host: options.host });
  stops.push(api.close);
  logger.info({ url: api.url, health: `${api.url}/health` }, "chatd is running");
  untilSignal(stops);
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
      const result = await migrate(db.url, (line) => logger.info(line)).catch((error: unknown) => {
        if (!(error instanceof SchemaAheadError)) throw error;
        logger.error(error.message);
        process.exitCode = error.exitCode;
      });
      if (result) console.log(`migrations applied: ${result.migrationsApplied.length}, sql/ files applied: ${result.sqlFilesApplied.length}`);
    } finally {
      await db.stop();
    }
  });

const serveOptions = (command: Command) =>
  command
    .option("-p, --port <port>", "HTTP port", portOption, Number(process.env.PORT ?? 8787))
    .option("--host <host>", "interface to listen on", process.env.HOST ?? "127.0.0.1");

serveOptions(program.command("serve").description("run the API and the worker in one process"))
  .action((options: { port: number; host: string }) => serve({ ...options, worker: true, migrate: false }));

serveOptions(program.command("start").description("migrate, then serve (the development default: embedded PostgreSQL)"))
  .action((options: { port: number; host: string }) => serve({ ...options, worker: true, migrate: true }));

program
  .command("worker")
  .description("run the worker alone")
  .option("-c, --concurrency <n>", "chats run at once", (value) => Number(value), 4)
  .option("--metrics-port <port>", "serve Prometheus /metrics on this port", portOption, Number(process.env.CHATD_METRICS_PORT ?? 9464))
  .action(async (options: { concurrency: number; metricsPort: number }) => {
    const db = await openDatabase();
    await refuseIncompatibleSchema(db, (message) => logger.error(message));
    const { startWorker } = await import("../../worker/index.ts");
    const worker = await startWorker({ databaseUrl: db.url, logger, concurrency: options.concurrency, metricsPort: options.metricsPort });
    untilSignal([db.stop, worker.stop]);
  });

registerExperimentsCommand(program, openDatabase);
registerSchemaCommand(program);
(await import("./token-command.ts")).registerTokenCommand(program, openDatabase);
(await import("./batch-command.ts")).registerBatchCommand(program, openDatabase);
(await import("./ops-command.ts")).registerOpsCommand(program, openDatabase);
(await import("./psql-command.ts")).registerPsqlCommand(program, openDatabase);

let longRunning = false;
program.hook("preAction", (_program, action) => {
  longRunning = ["serve", "start", "worker"].includes(action.name());
});
await program.parseAsync(process.argv);
// One-shot commands exit explicitly: an embedded PostgreSQL's exit hook would otherwise turn exitCode into 0.
if (!longRunning) process.exit(process.exitCode ?? 0);
