// Prometheus metrics (prom-client). Two kinds:
// - process counters and histograms the worker loop feeds (turns, provider step latency and errors, validation
//   time): they describe this process since it started;
// - gauges read from PostgreSQL at scrape time (receipts by status and code, pending requests, turns, queue
//   depth, lease recoveries, stuck chats, batch progress): the whole system's state, identical on every replica,
//   so the loop needs no bookkeeping for them and a restarted process reports the same totals.
// `chatd worker` serves them on --metrics-port (startMetricsServer); `chatd serve` mounts metricsHandler.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import client from "prom-client";

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: "chatd_" });

const runs = new client.Counter({
  name: "chatd_worker_runs_total", help: "Runner passes this process ended, by outcome (finished, promoted: the turn ended and the next started; paused, failed, lost, released).",
  labelNames: ["outcome"] as const, registers: [registry],
});
const providerSeconds = new client.Histogram({
  name: "chatd_provider_step_seconds", help: "Provider step duration (streaming included, retries included), by provider and finish reason.",
  labelNames: ["provider", "finish"] as const, registers: [registry],
  buckets: [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 30, 60, 120],
});
const providerErrors = new client.Counter({
  name: "chatd_provider_errors_total", help: "Provider steps that ended in an error after retries, by provider and error kind.",
  labelNames: ["provider", "kind"] as const, registers: [registry],
});
const validationSeconds = new client.Histogram({
  name: "chatd_structured_validation_seconds", help: "Time spent validating schemas and values with src/structured.",
  registers: [registry], buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
});

export function countTurn(outcome: string): void {
  runs.inc({ outcome });
}
/** One provider step as the loop saw it (retries included); an error after retries also counts by kind. */
export function recordProviderStep(provider: string, seconds: number, finish: string, errorKind: string | undefined): void {
  providerSeconds.observe({ provider, finish }, seconds);
  if (errorKind != null) providerErrors.inc({ provider, kind: errorKind });
}
export function observeValidation(seconds: number): void {
  validationSeconds.observe(seconds);
}

// --- gauges read from the database at scrape time ---------------------------------------------------------------

let database: pg.Pool | undefined;

/** The pool the scrape-time gauges read with: the worker's (chat_worker) or the API's (chatd_api). */
export function bindMetricsDatabase(pool: pg.Pool): void {
  database = pool;
}

interface Snapshot {
  receipts: { status: string; code: string | null; n: number }[];
  pending: number;
  turns: { state: string; n: number }[];
  jobs: { task: string; state: string; n: number }[];
  queued: number;
  recoveries: number;
  stuck: number;
  batches: { status: string; n: number }[];
  items: { status: string; n: number }[];
}

// One round trip per scrape; every gauge's collect() shares it. A security definer function (sql/140), so the
// API's login reads the counts without a grant on the tables behind them.
const SNAPSHOT_SQL = "select chat_private.service_gauges() as snapshot";

// Reset at the start of each scrape, so every gauge of one scrape reads the same snapshot and the next scrape
// reads a fresh one.
let current: Promise<Snapshot | undefined> | undefined;

function snapshot(): Promise<Snapshot | undefined> {
  const pool = database;
  if (pool == null) return Promise.resolve(undefined);
  current ??= pool.query<{ snapshot: Snapshot }>(SNAPSHOT_SQL).then((r) => r.rows[0]?.snapshot, () => undefined);
  return current;
}

function sqlGauge<L extends string>(name: string, help: string, labelNames: readonly L[],
  fill: (gauge: client.Gauge<L>, s: Snapshot) => void): void {
  new client.Gauge<L>({
    name, help, labelNames, registers: [registry],
    async collect() {
      const s = await snapshot();
      this.reset();
      if (s != null) fill(this, s);
    },
  });
}

sqlGauge("chatd_receipts", "Structured requests with a receipt, by status and error code (from the database).", ["status", "code"],
  (g, s) => s.receipts.forEach((r) => g.set({ status: r.status, code: r.code ?? "" }, r.n)));
sqlGauge("chatd_structured_requests_pending", "Structured requests without a receipt yet.", [],
  (g, s) => g.set(s.pending));
sqlGauge("chatd_turns", "Turns recorded in turn_progress, open or finished.", ["state"],
  (g, s) => s.turns.forEach((t) => g.set({ state: t.state }, t.n)));
sqlGauge("chatd_queue_depth", "Graphile Worker jobs by task and state (ready, scheduled, locked).", ["task", "state"],
  (g, s) => s.jobs.forEach((j) => g.set({ task: j.task, state: j.state }, j.n)));
sqlGauge("chatd_chat_queued_messages", "Inputs waiting in chat queues.", [],
  (g, s) => g.set(s.queued));
sqlGauge("chatd_lease_recoveries", "Lease expiries recovered by the sweep, summed over all turns.", [],
  (g, s) => g.set(s.recoveries));
sqlGauge("chatd_stuck_chats", "Runnable chats without a live lease (chat_private.stuck_chats).", [],
  (g, s) => g.set(s.stuck));
sqlGauge("chatd_batches", "Batches by status.", ["status"],
  (g, s) => s.batches.forEach((b) => g.set({ status: b.status }, b.n)));
sqlGauge("chatd_batch_items", "Items of unfinished batches by status (the progress of what is running now).", ["status"],
  (g, s) => s.items.forEach((i) => g.set({ status: i.status }, i.n)));

// --- serving ------------------------------------------------------------------------------------------------------

/** GET /metrics in the Prometheus text format; mount it on any node:http server. */
export async function metricsHandler(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    current = undefined;
    const body = await registry.metrics();
    res.writeHead(200, { "content-type": registry.contentType });
    res.end(body);
  } catch {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end("metrics unavailable\n");
  }
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** A small HTTP server that answers /metrics only (the worker has no other HTTP surface). */
export async function startMetricsServer(port: number, host = "127.0.0.1"): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && (req.url ?? "").split("?")[0] === "/metrics") {
      void metricsHandler(req, res);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
