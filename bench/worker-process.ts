// The worker the benchmarks start: the real worker with production intervals, no provider set-up, the given
// concurrency and workspace root.
import { pino } from "pino";
import { startWorker } from "../worker/index.ts";

const url = process.env.DATABASE_URL;
if (url == null) throw new Error("DATABASE_URL is required");
const worker = await startWorker({
  databaseUrl: url,
  logger: pino({ level: "warn" }),
  setup: false,
  concurrency: Number(process.env.CHATD_BENCH_CONCURRENCY ?? 8),
  ...(process.env.CHATD_WORKSPACES_ROOT != null ? { workspacesRoot: process.env.CHATD_WORKSPACES_ROOT } : {}),
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => process.exit(0));
});
