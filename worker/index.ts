// The worker process: Graphile Worker tasks (jobs only wake work; durable state lives in the chat tables) plus the
// lease sweep that recovers chats from crashed workers without waiting for Graphile Worker's 4-hour lock timeout.
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { Logger as WorkerLogger, run, type Runner, type TaskList } from "graphile-worker";
import pg from "pg";
import type { Logger } from "../src/log.ts";
import { makeChatRunTask } from "./chat-run.ts";
import { makeDeadlineTask } from "./requires-action-deadline.ts";

export interface WorkerOptions {
  databaseUrl: string;
  logger: Logger;
  concurrency?: number;
  sweepIntervalMs?: number;
}

export interface RunningWorker {
  workerId: string;
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: (options.concurrency ?? 4) + 2 });
  const log = options.logger.child({ worker_id: workerId });
  pool.on("error", (error) => log.error({ err: error }, "idle database connection failed"));
  const workerLogger = new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({ component: "graphile-worker", job_id: scope.jobId, task: scope.taskIdentifier });
    const method = level === "error" ? "error" : level === "warning" ? "warn" : level === "debug" ? "debug" : "info";
    child[method](meta ?? {}, message);
  });
  const taskList: TaskList = {
    chat_run: makeChatRunTask({ pool, workerId, log }),
    chat_requires_action_deadline: makeDeadlineTask({ pool, log }),
  };
  const runner: Runner = await run({
    pgPool: pool,
    concurrency: options.concurrency ?? 4,
    noHandleSignals: true,
    pollInterval: 1000,
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
  };
  await sweep();
  const timer = setInterval(sweep, options.sweepIntervalMs ?? 10_000);
  log.info("worker started");
  return {
    workerId,
    async stop() {
      clearInterval(timer);
      await runner.stop();
      await pool.end();
      log.info("worker stopped");
    },
  };
}
