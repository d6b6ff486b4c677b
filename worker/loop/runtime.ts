// What the worker process gives each run (worker/index.ts builds it once): its pool and view of the database, its
// listener and lease heartbeat, its fault points and tools, and the counters the runs keep.
import type pg from "pg";
import type { DatabaseHealth } from "../../src/db/pool.ts";
import type { Logger } from "../../src/log.ts";
import type { ModelRuntime } from "../../src/providers/index.ts";
import type { ToolDeployment } from "../../src/tools/index.ts";
import type { Faults } from "../faults.ts";
import type { LeaseKeeper } from "./lease-keeper.ts";
import type { ChatListener } from "./listener.ts";
import type { StopReason } from "./types.ts";

export interface RuntimeDeps {
  pool: pg.Pool;
  /** The process's view of the database (src/db/pool.ts): waits through outages, one log line per outage. */
  health: DatabaseHealth;
  workerId: string;
  log: Logger;
  workspacesRoot: string;
  faults: Faults;
  listener: ChatListener;
  /** The process's lease heartbeat: every run's lease renewed in one statement per beat. */
  leases: LeaseKeeper;
  /** Abort functions of the runs in progress (graceful shutdown aborts them). */
  runs: Set<(reason: StopReason) => void>;
  stopping: () => boolean;
  stats: RuntimeStats;
  modelRuntime?: ModelRuntime;
  toolTimeoutMs?: number;
  /** The deployment's tools and their result cap (worker/index.ts: the options' or the environment's). */
  toolDeployment: ToolDeployment;
}

export interface RuntimeStats {
  acquired: number;
  /** Runs cut off by a lost database connection that resumed with a new lease in the same job (chat-run.ts). */
  resumedAfterOutage: number;
  /** Turns started by re-acquiring in the job that finished the previous turn (no job hop). */
  reacquiredInJob: number;
  turnsFinished: number;
}
