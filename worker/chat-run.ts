// `chat_run`: the Graphile Worker task that wakes a runner for one chat. Jobs only wake work (enqueued with
// max_attempts 1, so Graphile Worker's retries never stack on chatd's own); everything durable is in the chat
// tables. The task takes the lease with a fresh runner id and runs the turn. When the turn ends by promoting
// the next queued input (status stays `running`), it re-acquires at once in the same job rather than waiting
// for the job the promotion enqueued: that job then finds the lease held (CHLSD) and ends quietly, and if it
// wins the race instead, this job's acquire gets CHLSD. Either way exactly one runner holds the chat.
// The job listens to the chat from before its first acquire (loop/lease.ts), across the leases it takes.
//
// An outage is not a crash: a run whose statement fails on its database connection has written nothing that the
// database did not commit, so the job waits for the database and takes the lease again at once (releasing its
// own), and the run goes on from the durable state. It waits no lease expiry and counts no recovery.
import type { Task } from "graphile-worker";
import { isConnectionError } from "../src/db/pool.ts";
import { countTurn } from "../src/metrics.ts";
import { loadSettings } from "./loop/config.ts";
import { CutOffByOutage, runWithLease } from "./loop/run.ts";
import type { RuntimeDeps } from "./loop/runtime.ts";
import type { RunOutcome } from "./loop/types.ts";
import { acquireLease, ChatSubscription, reacquireLease } from "./loop/lease.ts";

/** Runs the chat until there is nothing more for this job to do. Returns the outcome of each lease it held. */
export async function runChat(deps: RuntimeDeps, chatId: string): Promise<RunOutcome[]> {
  const outcomes: RunOutcome[] = [];
  const { health } = deps;
  const subscription = await ChatSubscription.open(deps.listener, chatId);
  /** The runner id of this job's lease when its run was cut off by the database connection. */
  let held: string | undefined;
  try {
    for (;;) {
      if (deps.stopping()) return outcomes;
      subscription.beforeAcquire();
      const resuming = held;
      const cap = deps.toolDeployment.resultCapBytes;
      const lease = await health.retry(() => resuming == null
        ? acquireLease(deps.pool, chatId, deps.workerId, cap)
        : reacquireLease(deps.pool, chatId, resuming, deps.workerId, cap));
      held = undefined;
      if (lease == null) return outcomes;
      deps.stats.acquired += 1;
      if (outcomes.length > 0) deps.stats.reacquiredInJob += 1;
      let outcome: RunOutcome;
      try {
        const settings = await health.retry(() => loadSettings(deps.pool, lease.configVersion));
        outcome = await runWithLease(deps, lease.fence, settings, { initial: lease.state, subscribe: subscription.subscribe });
      } catch (error) {
        if (!(isConnectionError(error) || error instanceof CutOffByOutage) || deps.stopping()) throw error;
        if (isConnectionError(error)) health.failed(error);
        deps.log.info({ chat_id: chatId, runner_id: lease.fence.runnerId },
          "run cut off by the database connection; it resumes from the committed state when the database is back");
        deps.stats.resumedAfterOutage += 1;
        held = lease.fence.runnerId;
        continue;
      }
      countTurn(outcome);
      outcomes.push(outcome);
      if (outcome !== "promoted") return outcomes;
    }
  } finally {
    subscription.close();
  }
}

export function makeChatRunTask(deps: RuntimeDeps): Task {
  return async (payload) => {
    const chatId = (payload as { chat_id?: unknown }).chat_id;
    if (typeof chatId !== "string") return;
    try {
      await runChat(deps, chatId);
    } catch (error) {
      // Stopping while the database is away: the lease is left to expire (nothing was written); failing the job
      // would only need the database too.
      if (deps.stopping() && isConnectionError(error)) return;
      throw error;
    }
  };
}
