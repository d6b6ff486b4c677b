// The worker process: Graphile Worker tasks (jobs only wake work; durable state lives in the chat tables) plus the
// lease sweep that recovers chats from crashed workers without waiting for Graphile Worker's 4-hour lock timeout.
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { Logger as WorkerLogger, run, type Runner, type TaskList } from "graphile-worker";
import { projectRoot } from "../src/db/database.ts";
import { createPool } from "../src/db/pool.ts";
import { workerDatabaseUrl } from "../src/db/run-time-roles.ts";
import type { Logger } from "../src/log.ts";
import { closeParkedMcpConnections } from "../src/mcp/run-tools.ts";
import { configureProvidersFromEnv } from "../src/providers/configure.ts";
import type { ModelRuntime } from "../src/providers/index.ts";
import { defaultWorkspacesRoot, ensureDemoWorkspace, toolDeploymentFromEnv, type ToolDeployment } from "../src/tools/index.ts";
import { bindMetricsDatabase, startMetricsServer } from "../src/metrics.ts";
import { makeBatchCancelTask, makeBatchValidateTask, sweepBatches } from "./batch-tasks.ts";
import { makeChatRunTask } from "./chat-run.ts";
import { parseFaults, type Faults } from "./faults.ts";
import { ChatListener } from "./loop/listener.ts";
import type { RuntimeDeps, RuntimeStats, StopReason } from "./loop/run.ts";
import { makeDeadlineTask } from "./requires-action-deadline.ts";

export interface WorkerOptions {
  databaseUrl: string;
  logger: Logger;
  concurrency?: number;
  /** Lease sweep interval (default 10 s). */
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
  // Task queries + deltas + heartbeats share the pool; Graphile Worker takes a few of its own.
  const pool = createPool({ connectionString: databaseUrl, max: concurrency * 3 + 4 }, log, "worker");
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
  const listener = new ChatListener(databaseUrl, log);
  const runs = new Set<(reason: StopReason) => void>();
  let stopping = false;
  const stats: RuntimeStats = { acquired: 0, reacquiredInJob: 0, turnsFinished: 0 };
  const faults = typeof options.faults === "object" ? options.faults : parseFaults(options.faults ?? process.env.CHATD_FAULTS);
  const deps: RuntimeDeps = {
    pool, workerId, log, workspacesRoot, faults, listener, runs, stats, stopping: () => stopping,
    ...(options.modelRuntime != null ? { modelRuntime: options.modelRuntime } : {}),
    ...(options.toolTimeoutMs != null ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
    toolDeployment,
  };
  const workerLogger = new WorkerLogger((scope) => (level, message, meta) => {
    const method = level === "error" ? "error" : level === "warning" ? "warn" : level === "debug" ? "debug" : "info";
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
  };
  const runner: Runner = await run({
    pgPool: pool,
    concurrency,
    // Jobs only wake a chat (everything durable is in the chat tables), so Graphile Worker's batching costs nothing in
    // safety: a job held in this process's local queue or awaiting a batched completion when the process dies is
    // recovered by the lease sweep (it re-enqueues a runnable chat whose job has been locked for a lease length).
    // It saves a fetch and a completion statement per job under load.
    preset: { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0 } },
    noHandleSignals: true,
    pollInterval: options.pollIntervalMs ?? 1000,
    logger: workerLogger,
    parsedCronItems: [],
    taskList,
  });
  const sweep = async () => {
    try {
      const { rows } = await pool.query<{ n: number }>("select chat_private.sweep_expired_leases() as n");
      if ((rows[0]?.n ?? 0) > 0) log.info({ chats: rows[0]?.n }, "lease sweep re-enqueued chats");
    } catch (error) {
      log.error({ err: error }, "lease sweep failed");
    }
    await sweepBatches(pool, log);
  };
  await sweep();
  const timer = setInterval(sweep, options.sweepIntervalMs ?? 10_000);
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
      clearInterval(timer);
      await metrics?.close();
      // Abandon running steps: each run releases its lease (nothing half-written is committed) ...
      for (const abort of runs) abort("shutdown");
      await runner.stop();
      // ... and the chats it released are handed to the remaining workers now, not at their next sweep.
      await sweep();
      await closeParkedMcpConnections();
      await listener.close();
      await pool.end();
      log.info("worker stopped");
    },
  };
}
