// Supervision of Graphile Worker's job runner (docs/workers.md, "Running under a supervisor"): a worker whose runner
// no longer takes jobs must exit for its supervisor instead of living on as a zombie. The runner's promise settling
// is one sign; two more are watched here, because neither settles it:
// - the runner starting a shutdown nobody asked for (a failed completion batch, a worker that exited): Graphile
//   Worker then waits for its running jobs, and after a failed batch its batcher's release can wait forever;
// - the runner taking no job for `stallSeconds` while it had a free slot the whole time and a runnable job has
//   waited at least as long, seen at two checks (a fetch that never returns, a pool that never hands out a
//   connection): no event at all.
import type pg from "pg";
import type { WorkerEvents } from "graphile-worker";
import { isConnectionError, type DatabaseHealth } from "../src/db/pool.ts";
import type { Logger } from "../src/log.ts";

const DEFAULT_STALL_SECONDS = 60;

/** The stall bound from CHATD_WORKER_STALL_SECONDS, else the default. */
export function stallSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CHATD_WORKER_STALL_SECONDS;
  if (raw == null || raw === "") return DEFAULT_STALL_SECONDS;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) {
    throw new RangeError(`CHATD_WORKER_STALL_SECONDS: an integer from 1 to 86400 is required (got ${raw})`);
  }
  return seconds;
}

export interface Supervision {
  events: WorkerEvents;
  /** The task pool (the check's one statement). */
  pool: pg.Pool;
  health: DatabaseHealth;
  concurrency: number;
  stallSeconds: number;
  taskNames: string[];
  log: Logger;
  stopping(): boolean;
  lost(error: Error): void;
}

/** Starts watching; returns the function that stops the watch (at shutdown). */
export function superviseRunner(s: Supervision): () => void {
  s.events.on("pool:gracefulShutdown", ({ message }) => {
    if (!s.stopping()) s.lost(new Error(`the job runner started shutting down on its own: ${message}`));
  });
  let running = 0;
  /** The last moment the runner took a job or had no free slot: a stall is counted from there. */
  let lastActive = Date.now();
  let seenOutages = s.health.outages;
  s.events.on("job:start", () => {
    running += 1;
    lastActive = Date.now();
  });
  s.events.on("job:complete", () => {
    if (running === s.concurrency) lastActive = Date.now();
    running -= 1;
  });
  let checking = false;
  /** The runnable jobs waiting longer than the bound at the last check. */
  let suspects = new Set<string>();
  const check = async () => {
    if (checking || s.stopping()) return;
    checking = true;
    try {
      // An outage holds back fetches and this check alike: the runner gets a stall bound from the database's return.
      if (s.health.down || s.health.outages !== seenOutages || running >= s.concurrency) {
        seenOutages = s.health.outages;
        lastActive = Date.now();
        suspects = new Set();
        return;
      }
      const idleMs = Date.now() - lastActive;
      if (idleMs < s.stallSeconds * 1000) {
        suspects = new Set();
        return;
      }
      // Jobs in a named queue wait for their queue, not for this runner: never counted.
      const { rows } = await s.pool.query<{ id: string }>(
        `select j.id::text from graphile_worker.jobs j
         where j.locked_at is null and j.attempts < j.max_attempts and j.task_identifier = any($2) and j.queue_name is null
           and j.run_at < now() - make_interval(secs => $1)
         order by j.id limit 20`, [s.stallSeconds, s.taskNames]);
      // A job seen waiting at two checks: one returned or unlocked just now keeps its old run_at, and a live runner
      // takes it within its poll interval, shorter than the time between checks.
      const waiting = new Set(rows.map((row) => row.id));
      const seenBefore = [...waiting].some((id) => suspects.has(id));
      suspects = waiting;
      // Still idle after the statement, no outage meanwhile, and a job that nobody took for the whole bound.
      if (seenBefore && s.health.outages === seenOutages && Date.now() - lastActive >= s.stallSeconds * 1000
        && !s.stopping()) {
        s.lost(new Error(`the job runner took no job for ${Math.round(idleMs / 1000)} s with a free slot while jobs waited`));
      }
    } catch (error) {
      if (!isConnectionError(error)) s.log.error({ err: error }, "job runner check failed");
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), Math.min(5000, Math.max(250, s.stallSeconds * 250)));
  return () => clearInterval(timer);
}
