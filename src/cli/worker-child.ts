// `chatd start` runs the worker as a child process (`chatd worker`), so that no API request can stall its
// heartbeats and a worker that dies does not take the API with it. The child is supervised: an exit while chatd
// runs (`chatd worker` exits non-zero when its job runner dies) is restarted after a backoff that doubles from 1 s
// to 30 s and starts again at 1 s once a worker has stayed up for a minute. The child runs in a session of its own
// (a terminal's Ctrl-C reaches chatd only, which then stops it with SIGTERM) and stops by itself when its IPC
// channel closes, so a chatd killed with SIGKILL leaves no worker behind.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { logger } from "../log.ts";

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
const STABLE_MS = 60_000;
/** SIGKILL after this; below lifecycle.ts's deadline, so chatd still stops its database. */
const STOP_MS = 20_000;

/**
 * What only the API uses: its token secret, the metrics token of its port, its own login. The worker signs and
 * checks no token and serves its metrics without one, so a tool or provider bug in the child cannot leak them.
 * (A deny list, not an allow list: provider keys and tool settings are named by the operator's configuration.)
 */
const API_ONLY = ["CHATD_JWT_SECRET", "CHATD_METRICS_TOKEN", "CHATD_API_DATABASE_URL", "CHATD_API_PASSWORD"] as const;

/** The child's environment: this process's, without the API's secrets, with DATABASE_URL the worker's login. */
export function workerEnvironment(env: NodeJS.ProcessEnv, databaseUrl: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, DATABASE_URL: databaseUrl };
  for (const name of API_ONLY) delete out[name];
  return out;
}

/** The message `chatd worker` sends its parent once the worker runs. */
export const WORKER_READY = "chatd:worker-ready";

export interface WorkerChild {
  stop(): Promise<void>;
}

/** Starts `chatd worker ARGS` on `databaseUrl`; resolves once it runs, rejects if its first start fails. */
export async function startWorkerChild(databaseUrl: string, args: string[]): Promise<WorkerChild> {
  let current: ChildProcess | undefined;
  let supervising = false;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let backoff = FIRST_BACKOFF_MS;

  const launch = () => new Promise<void>((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, "main.ts"), "worker", ...args], {
      env: workerEnvironment(process.env, databaseUrl),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      detached: true,
    });
    current = child;
    child.on("message", (message) => {
      if (message === WORKER_READY) resolve();
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      reject(new Error(`the worker process exited while starting (${signal ?? `exit code ${code}`})`));
      if (current === child) current = undefined;
      if (stopping || !supervising) return;
      if (Date.now() - startedAt >= STABLE_MS) backoff = FIRST_BACKOFF_MS;
      logger.warn({ code, signal, restart_in_ms: backoff }, "the worker process exited; restarting it");
      restart = setTimeout(() => void launch().catch(() => undefined), backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    });
  });

  await launch();
  supervising = true;
  return {
    async stop() {
      stopping = true;
      clearTimeout(restart);
      const child = current;
      if (child == null || child.exitCode != null || child.signalCode != null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const kill = setTimeout(() => {
        logger.warn({ after_ms: STOP_MS }, "the worker process did not stop in time; killing it");
        child.kill("SIGKILL");
      }, STOP_MS);
      await exited;
      clearTimeout(kill);
    },
  };
}
