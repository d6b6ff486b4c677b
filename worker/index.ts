// The worker process: Graphile Worker tasks (jobs only wake work; durable state lives in the chat tables) plus the
// lease sweep that recovers chats from crashed workers without waiting for Graphile Worker's 4-hour lock timeout.
//
// PostgreSQL going away never ends or idles the process (docs/workers.md): start-up waits for the database (bounded),
// every statement waits for a connection through an outage (src/db/pool.ts), a run cut off by its connection resumes
// (chat-run.ts), and Graphile Worker's job completions are retried on a new connection (worker/pools.ts). The job
// runner is supervised: should it stop for any reason but stop(), the process exits with RUNNER_LOST_EXIT_CODE at
// once (onRunnerLost), so that a supervisor starts a new one, instead of living on without running jobs.
import { hostname } from "node:os";
import type pg from "pg";
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { Logger as WorkerLogger, run, type Runner, type TaskList, type WorkerEvents } from "graphile-worker";
import { projectRoot } from "../src/db/database.ts";
import { DatabaseHealth, isConnectionError } from "../src/db/pool.ts";
import { poolerMode } from "../src/db/pooler.ts";
import { requireRole, WORKER_ROLE, workerDatabaseUrl, workerSessionUrl } from "../src/db/run-time-roles.ts";
import { DatabaseUnreachableError, startupWaitSeconds } from "../src/db/startup-wait.ts";
import type { Logger } from "../src/log.ts";
import { closeParkedMcpConnections } from "../src/mcp/run-tools.ts";
import { configureProvidersFromEnv } from "../src/providers/configure.ts";
import type { ModelRuntime } from "../src/providers/index.ts";
import { defaultWorkspacesRoot, ensureDemoWorkspace, toolDeploymentFromEnv, type ToolDeployment } from "../src/tools/index.ts";
import { bindMetricsDatabase, startMetricsServer } from "../src/metrics.ts";
import { makeBatchCancelTask, makeBatchValidateTask, sweepBatches } from "./batch-tasks.ts";
import { makeRetentionTask, RETENTION_TASK, scheduleRetention } from "./retention.ts";
import { makeWebhookDeliverTask, sweepWebhooks } from "./webhook-task.ts";
import { makeChatRunTask } from "./chat-run.ts";
import { LeaseKeeper } from "./loop/lease-keeper.ts";
import { ChatListener } from "./loop/listener.ts";
import type { RuntimeDeps, RuntimeStats } from "./loop/runtime.ts";
import type { StopReason } from "./loop/types.ts";
import { createWorkerPools, poolSizeFromEnv } from "./pools.ts";
import { makeDeadlineTask } from "./requires-action-deadline.ts";
import { stallSecondsFromEnv, superviseRunner } from "./supervision.ts";
import { fault, parseFaults, type Faults } from "./faults.ts";

/** Graphile Worker's warning that its pool is smaller than the concurrency (see the logger below). */
const QUEUE_POOL_ADVICE = /^WARNING: having maxPoolSize \(\d+\) smaller than concurrency/;

/** The exit status of a worker process whose job runner stopped on its own (EX_SOFTWARE). */
export const RUNNER_LOST_EXIT_CODE = 70;
const ALIVE_REPORT_MS = 1000;
const ALIVE_TTL_SECONDS = 4;
/** How long a stop waits for the job runner (its running steps are aborted first, so they end at once). */
const RUNNER_STOP_MS = 15_000;

export interface WorkerOptions {
  databaseUrl: string;
  logger: Logger;
  concurrency?: number;
  /** Lease sweep interval (default 5 s). */
  sweepIntervalMs?: number;
  /** Graphile Worker's poll interval for future jobs (new jobs arrive by LISTEN regardless). */
  pollIntervalMs?: number;
  /** Where chat workspaces live (default: CHATD_WORKSPACES_ROOT, else .chatd/workspaces). */
  workspacesRoot?: string;
  /** Fault-injection points (tests); default: CHATD_FAULTS. */
  faults?: Faults | string;
  /** Start-up setup: model configs from provider environment variables and the demo workspace (default true). */
  setup?: boolean;
  /** Test hook: replaces fetch for provider requests. */
  modelRuntime?: ModelRuntime;
  toolTimeoutMs?: number;
  /** Optional write and command tools; default: read once from CHATD_ENABLE_WRITE_TOOLS, CHATD_ENABLE_EXEC_TOOLS,
   * CHATD_EXEC_TIMEOUT_MS, CHATD_EXEC_OUTPUT_CAP_BYTES (all off unless set). */
  tools?: ToolDeployment;
  /** Serve Prometheus /metrics on this port (0: any free port); unset: no metrics server. */
  metricsPort?: number;
  /** Database connections of the process in all (worker/pools.ts); default: CHATD_WORKER_POOL_SIZE, else 32. */
  poolSize?: number;
  /** How long start-up waits for the database (default: CHATD_DB_WAIT_SECONDS, else 60). */
  startupWaitSeconds?: number;
  /** How long the job runner may take no job, with a free slot and jobs waiting, before the worker counts it lost
   * (worker/supervision.ts; default: CHATD_WORKER_STALL_SECONDS, else 60). */
  stallSeconds?: number;
  /** Called when the job runner stopped without stop() (default: exit with RUNNER_LOST_EXIT_CODE). */
  onRunnerLost?: (error: unknown) => void;
}

/** Waits for the database at start-up, at most `seconds`; one line when it has to wait, a clear error when it gives up. */
async function waitForDatabase(pool: pg.Pool, health: DatabaseHealth, seconds: number, log: Logger): Promise<void> {
  health.waitUntil(Date.now() + seconds * 1000);
  try {
    await pool.query("select 1");
  } catch (error) {
    if (!isConnectionError(error)) throw error;
    throw new DatabaseUnreachableError(seconds, error);
  } finally {
    health.waitUntil(Infinity);
  }
  if (health.outages > 0) log.info("database reachable: starting");
}

export interface RunningWorker {
  workerId: string;
  stats: RuntimeStats;
  /** The /metrics URL when metricsPort was given. */
  metricsUrl?: string;
  /** Runs one lease sweep now (tests; the interval runs it anyway). */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  // Every connection of the worker (its pool, Graphile Worker's, the listener) works as chat_worker.
  const databaseUrl = workerDatabaseUrl(options.databaseUrl);
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 4;
  const log = options.logger.child({ worker_id: workerId });
  const health = new DatabaseHealth(log);
  const pools = createWorkerPools(databaseUrl, workerSessionUrl(options.databaseUrl), options.poolSize ?? poolSizeFromEnv(), log, health);
  const { pool } = pools;
  await waitForDatabase(pool, health, options.startupWaitSeconds ?? startupWaitSeconds(), log).then(async () => {
    if (poolerMode() === "transaction") await requireRole(pool, WORKER_ROLE);
  }).catch(async (error: unknown) => {
    await pools.end();
    throw error;
  });
  const workspacesRoot = options.workspacesRoot ?? defaultWorkspacesRoot(projectRoot);
  // Read before anything starts, so a bad value stops the worker instead of changing which tools exist.
  const toolDeployment = options.tools ?? toolDeploymentFromEnv();
  if (toolDeployment.writeTools || toolDeployment.execTools) {
    log.warn({ write_tools: toolDeployment.writeTools, exec_tools: toolDeployment.execTools,
      exec_timeout_ms: toolDeployment.execTimeoutMs }, "optional workspace tools enabled (never offered in plan mode)");
  }
  if (options.setup !== false) {
    const { configured, defaultId } = await configureProvidersFromEnv(pool);
    log.info({ configured, default_model_config: defaultId }, defaultId === "scripted"
      ? "no provider credentials: the scripted provider (deterministic, not a real model) is the default"
      : "model configs from the environment");
    await ensureDemoWorkspace(workspacesRoot);
  }
  const listener = new ChatListener(pools.listenUrl, log, health);
  const runs = new Set<(reason: StopReason) => void>();
  let stopping = false;
  const stats: RuntimeStats = { acquired: 0, reacquiredInJob: 0, resumedAfterOutage: 0, turnsFinished: 0 };
  const faults = typeof options.faults === "object" ? options.faults : parseFaults(options.faults ?? process.env.CHATD_FAULTS);
  const deps: RuntimeDeps = {
    pool, health, workerId, log, workspacesRoot, faults, listener, leases: new LeaseKeeper(pool, log), runs, stats,
    stopping: () => stopping,
    ...(options.modelRuntime != null ? { modelRuntime: options.modelRuntime } : {}),
    ...(options.toolTimeoutMs != null ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
    toolDeployment,
  };
  const workerLogger = new WorkerLogger((scope) => (level, message, meta) => {
    const serious = level === "error" || level === "warning";
    // During an outage Graphile Worker reports each failed fetch and LISTEN; the outage's own line stands for them.
    // Its pool-size advice assumes jobs run on its pool; chatd's run on the task pool, and the queue pool only fetches
    // into the local queue and completes in batches, so a queue pool smaller than the concurrency is by design.
    const method = (serious && health.down) || QUEUE_POOL_ADVICE.test(message) ? "debug"
      : level === "error" ? "error" : level === "warning" ? "warn" : level === "debug" ? "debug" : "info";
    // Graphile Worker logs lines per job (debug, info): build the child logger only for a line that is written.
    if (!log.isLevelEnabled(method)) return;
    const child = log.child({ component: "graphile-worker", job_id: scope.jobId, task: scope.taskIdentifier });
    child[method](meta ?? {}, message);
  });
  const taskList: TaskList = {
    chat_run: makeChatRunTask(deps),
    chat_requires_action_deadline: makeDeadlineTask({ pool, log }),
    batch_validate: makeBatchValidateTask({ pool, log }),
    batch_cancel: makeBatchCancelTask({ pool, log }),
    [RETENTION_TASK]: makeRetentionTask({ pool, log }),
    webhook_deliver: makeWebhookDeliverTask({ pool, log, guard: process.env.NODE_ENV === "production", userAgent: "chatd-webhooks/1" }),
  };
  // Graphile Worker's id for this process's pool: the locked_by of the jobs it fetches (reported alive below).
  const events: WorkerEvents = new EventEmitter();
  let queueId: string | undefined;
  events.on("pool:create", ({ workerPool }) => {
    queueId = workerPool.id;
  });
  const runner: Runner = await run({
    events,
    pgPool: pools.queuePool,
    concurrency,
    // Jobs only wake a chat (everything durable is in the chat tables), so Graphile Worker's batching costs nothing in
    // safety: a job held in this process's local queue or awaiting a batched completion when the process dies is
    // recovered by the lease sweep (it re-enqueues a runnable chat whose job has been locked for a lease length).
    // It saves a fetch and a completion statement per job under load. Failures are batched too: a batch that fails
    // shuts the runner down (which the supervision below turns into an exit), where an unbatched one would be an
    // unhandled rejection. Batches are not retried by Graphile Worker (graphile/worker#636); the queue pool retries
    // their statement on a new connection after a connection error instead (worker/pools.ts).
    preset: { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    noHandleSignals: true,
    pollInterval: options.pollIntervalMs ?? 1000,
    logger: workerLogger,
    parsedCronItems: [],
    taskList,
  });
  pools.startRetrying();
  // Fault injection (tests): the queue pool stops handing out connections, so the runner stops taking jobs silently.
  if (faults.queue_checkout != null) {
    const connect = pools.queuePool.connect.bind(pools.queuePool) as () => Promise<pg.PoolClient>;
    (pools.queuePool as { connect: unknown }).connect = (...args: unknown[]) =>
      args.length === 0 ? (fault(faults, "queue_checkout") ?? connect()) : (connect as (...a: unknown[]) => void)(...args);
  }
  const onRunnerLost = options.onRunnerLost ?? (() => process.exit(RUNNER_LOST_EXIT_CODE));
  let lostOnce = false;
  const lost = (error: unknown) => {
    if (stopping || lostOnce) return;
    lostOnce = true;
    log.fatal({ err: error, exit_code: RUNNER_LOST_EXIT_CODE },
      "the job runner stopped on its own: exiting so that a supervisor starts a new worker");
    onRunnerLost(error);
  };
  void runner.promise.then(() => lost(new Error("the job runner finished")), lost);
  const stopSupervision = superviseRunner({ events, pool, health, concurrency, log, taskNames: Object.keys(taskList),
    stallSeconds: options.stallSeconds ?? stallSecondsFromEnv(), stopping: () => stopping, lost });
  // Alive reports (sql/070 report_worker_alive): a killed worker's fetched jobs are re-run once its report lapses,
  // without waiting for a lease length. Reported every second, valid for four.
  let reporting = false;
  const reportAlive = async () => {
    if (reporting || queueId == null) return;
    reporting = true;
    try {
      await pool.query("select chat_private.report_worker_alive($1, $2, $3)", [queueId, workerId, ALIVE_TTL_SECONDS]);
    } catch (error) {
      if (!isConnectionError(error)) log.error({ err: error }, "alive report failed");
    } finally {
      reporting = false;
    }
  };
  let sweeping = false;
  const sweep = async () => {
    // During an outage a sweep waits for the database: one at a time, not one per interval.
    if (sweeping) return;
    sweeping = true;
    try {
      const { rows } = await pool.query<{ n: number }>("select chat_private.sweep_expired_leases() as n");
      if ((rows[0]?.n ?? 0) > 0) log.info({ chats: rows[0]?.n }, "lease sweep re-enqueued chats");
    } catch (error) {
      if (!isConnectionError(error)) log.error({ err: error }, "lease sweep failed");
    }
    try {
      await sweepBatches(pool, log);
      await sweepWebhooks(pool, log);
    } finally {
      sweeping = false;
    }
  };
  await reportAlive();
  await sweep();
  const timer = setInterval(() => void sweep(), options.sweepIntervalMs ?? 5000);
  const aliveTimer = setInterval(() => void reportAlive(), ALIVE_REPORT_MS);
  const stopRetention = scheduleRetention(pool, log);
  bindMetricsDatabase(pool);
  const metrics = options.metricsPort != null ? await startMetricsServer(options.metricsPort) : undefined;
  log.info({ metrics: metrics?.url }, "worker started");
  return {
    workerId,
    stats,
    ...(metrics != null ? { metricsUrl: metrics.url } : {}),
    sweep,
    async stop() {
      if (stopping) return;
      stopping = true;
      // Statements stop waiting for the database: a stop during an outage ends instead of waiting for it.
      health.stopWaiting();
      clearInterval(timer);
      clearInterval(aliveTimer);
      stopSupervision();
      stopRetention();
      await metrics?.close();
      // Abandon running steps: each run releases its lease (nothing half-written is committed) ...
      for (const abort of runs) abort("shutdown");
      // Bounded: a runner that stopped taking jobs (a fetch that never returns) never finishes its stop either.
      let bound: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([runner.stop().then(() => true, (error: unknown) => {
        log.error({ err: error }, "the job runner's stop failed");
        return false;
      }),
        new Promise<false>((resolve) => (bound = setTimeout(() => resolve(false), RUNNER_STOP_MS)))]);
      clearTimeout(bound);
      // Its jobs are finished or returned: nothing of this process is left for the sweep to reclaim. Unless the
      // runner did not stop: its jobs stay locked, and the sweep takes them once this process's alive report lapses.
      if (!stopped) log.error({ after_ms: RUNNER_STOP_MS }, "the job runner did not stop in time: its jobs are left to the sweep");
      if (queueId != null && stopped) {
        await pool.query("select chat_private.report_worker_stopped($1)", [queueId]).catch(() => undefined);
      }
      // ... and the chats it released are handed to the remaining workers now, not at their next sweep.
      await sweep();
      await closeParkedMcpConnections();
      await listener.close();
      // A runner that did not stop still holds queue connections, which the queue pool's end would wait for.
      await (stopped ? pools.end() : pools.pool.end());
      log.info("worker stopped");
    },
  };
}
