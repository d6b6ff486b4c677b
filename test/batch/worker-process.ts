// A real worker process for the batch acceptance tests (like test/support/worker-process.ts, with the worker
// concurrency from CHATD_WORKER_CONCURRENCY so a 1,000-line batch drains quickly). Stops gracefully on SIGTERM.
// A test filter such as "batch/" makes uvu import every file here, so it starts only when spawned for that purpose
// (CHATD_BATCH_WORKER_URL set), never inside the test runner.
import { pino } from "pino";
import { startWorker } from "../../worker/index.ts";

async function main(url: string): Promise<void> {
  const worker = await startWorker({
    databaseUrl: url,
    logger: pino({ level: process.env.CHATD_TEST_LOG || "silent" }),
    setup: false,
    sweepIntervalMs: 200,
    pollIntervalMs: 200,
    concurrency: Number(process.env.CHATD_WORKER_CONCURRENCY ?? 8),
    ...(process.env.CHATD_WORKSPACES_ROOT != null ? { workspacesRoot: process.env.CHATD_WORKSPACES_ROOT } : {}),
  });
  process.on("SIGTERM", () => {
    void worker.stop().then(() => process.exit(0));
  });
}

const url = process.env.CHATD_BATCH_WORKER_URL;
if (url != null) await main(url);
