// A worker process for kill tests: starts the real worker on DATABASE_URL with short test intervals, and stops
// gracefully on SIGTERM. Fault points come from CHATD_FAULTS (worker/faults.ts); CHATD_TEST_CONCURRENCY sets the
// concurrency (default 2); the pool size and the start-up wait come from the worker's own environment variables.
import { pino } from "pino";
import { startWorker } from "../../worker/index.ts";

const url = process.env.DATABASE_URL;
if (url == null) throw new Error("DATABASE_URL is required");
const started = startWorker({
  databaseUrl: url,
  logger: pino({ level: process.env.CHATD_TEST_LOG || "silent" }),
  setup: false,
  sweepIntervalMs: Number(process.env.CHATD_SWEEP_INTERVAL_MS ?? 200),
  pollIntervalMs: 200,
  concurrency: Number(process.env.CHATD_TEST_CONCURRENCY ?? 2),
  ...(process.env.CHATD_WORKSPACES_ROOT != null ? { workspacesRoot: process.env.CHATD_WORKSPACES_ROOT } : {}),
});
// Installed before start-up ends: a SIGTERM right after the "worker started" line must reach stop(), not kill.
process.on("SIGTERM", () => {
  void started.then((worker) => worker.stop()).then(() => process.exit(0));
});
await started;
