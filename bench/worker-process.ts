// The worker the benchmarks start: the real worker with production intervals, no provider set-up, the given
// concurrency and workspace root. With CHATD_BENCH_STATS_FILE it counts its database round trips (every query a
// pg client sends; node-pg never pipelines, so each is one round trip) and writes them with its CPU time to that
// file on SIGUSR2 (a snapshot) and on SIGTERM (before exiting), so the benchmark can report them per turn. The file
// also holds the first call of each of the worker's named statements (`chatd_*`: text and values), which
// bench/sql-floor.ts replays without the worker.
import { writeFileSync } from "node:fs";
import pg from "pg";
import { pino } from "pino";
import { startWorker } from "../worker/index.ts";

const url = process.env.DATABASE_URL;
if (url == null) throw new Error("DATABASE_URL is required");
const statsFile = process.env.CHATD_BENCH_STATS_FILE;
let roundTrips = 0;
const statements: Record<string, { text: string; values: unknown[] }> = {};
if (statsFile != null) {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    roundTrips += 1;
    const config = args[0] as { name?: unknown; text?: unknown; values?: unknown } | null;
    if (typeof config?.name === "string" && config.name.startsWith("chatd_") && !(config.name in statements)) {
      statements[config.name] = { text: String(config.text), values: Array.isArray(config.values) ? config.values : [] };
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}

/** Round trips and CPU milliseconds so far. */
function writeStats(label: string): void {
  if (statsFile == null) return;
  const cpu = process.cpuUsage();
  writeFileSync(statsFile, JSON.stringify({ label, roundTrips, cpuMs: (cpu.user + cpu.system) / 1000, statements }));
}

const worker = await startWorker({
  databaseUrl: url,
  logger: pino({ level: "warn" }),
  setup: false,
  concurrency: Number(process.env.CHATD_BENCH_CONCURRENCY ?? 8),
  ...(process.env.CHATD_WORKSPACES_ROOT != null ? { workspacesRoot: process.env.CHATD_WORKSPACES_ROOT } : {}),
});
process.on("SIGUSR2", () => writeStats("snapshot"));
process.on("SIGTERM", () => {
  writeStats("final");
  void worker.stop().then(() => process.exit(0));
});
