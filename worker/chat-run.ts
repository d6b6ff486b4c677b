// `chat_run`: the Graphile Worker task that wakes a runner for one chat. Jobs only wake work (enqueued with
// max_attempts 1, so Graphile Worker's retries never stack on chatd's own); everything durable is in the chat
// tables. The task takes the lease with a fresh runner id and runs the turn. When the turn ends by promoting
// the next queued input (status stays `running`), it re-acquires at once in the same job rather than waiting
// for the job the promotion enqueued: that job then finds the lease held (CHLSD) and ends quietly, and if it
// wins the race instead, this job's acquire gets CHLSD. Either way exactly one runner holds the chat.
// The job listens to the chat from before its first acquire (loop/lease.ts), across the leases it takes.
import type { Task } from "graphile-worker";
import { countTurn } from "../src/metrics.ts";
import { loadSettings } from "./loop/config.ts";
import { runWithLease, type RunOutcome, type RuntimeDeps } from "./loop/run.ts";
import { acquireLease, ChatSubscription } from "./loop/lease.ts";

/** Runs the chat until there is nothing more for this job to do. Returns the outcome of each lease it held. */
export async function runChat(deps: RuntimeDeps, chatId: string): Promise<RunOutcome[]> {
  const outcomes: RunOutcome[] = [];
  const subscription = await ChatSubscription.open(deps.listener, chatId);
  try {
    for (;;) {
      if (deps.stopping()) return outcomes;
      subscription.beforeAcquire();
      const lease = await acquireLease(deps.pool, chatId, deps.workerId);
      if (lease == null) return outcomes;
      deps.stats.acquired += 1;
      if (outcomes.length > 0) deps.stats.reacquiredInJob += 1;
      const settings = await loadSettings(deps.pool, lease.configVersion);
      const outcome = await runWithLease(deps, lease.fence, settings, { initial: lease.state, subscribe: subscription.subscribe });
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
    await runChat(deps, chatId);
  };
}
