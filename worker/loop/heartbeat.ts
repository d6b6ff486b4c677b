// A run's lease heartbeat: renews the lease every third of its length and reads the chat's status in the same round
// trip (an interrupt is seen even when a notification was missed). It renews only while the run makes progress
// (watchdog.ts ProgressClock), and only one renewal is in flight: during an outage a renewal waits for the database
// (src/db/pool.ts) and the lease is kept, to be renewed once it is back (a lease that ran out across a server
// restart gets a lease length of grace: sql/070 sweep_expired_leases).
import { isConnectionError } from "../../src/db/pool.ts";
import type { Logger } from "../../src/log.ts";
import type { RuntimeSettings } from "./config.ts";
import type { Transitions } from "./transitions.ts";
import type { ProgressClock } from "./watchdog.ts";

export function startHeartbeat(input: { tx: Transitions; settings: RuntimeSettings; progress: ProgressClock; log: Logger;
  stop: (reason: "lost" | "interrupt") => void; stopped: () => boolean }): () => void {
  const { tx, settings, progress, log, stop } = input;
  let beating = false;
  const beat = async (): Promise<void> => {
    if (beating) return;
    if (progress.idleMs() > settings.progressTimeoutMs) {
      // Wedged (a hung call no deadline covers): the lease is left to expire, so another worker takes the chat.
      if (!input.stopped()) {
        log.warn({ idle_ms: progress.idleMs() }, "the run made no progress within progress_timeout_seconds; its lease is left to expire");
      }
      stop("lost");
      return;
    }
    beating = true;
    try {
      const hb = await tx.heartbeat(settings.leaseSeconds);
      if (!hb.renewed) stop("lost");
      else if (hb.status === "interrupting") stop("interrupt");
    } catch (error) {
      if (isConnectionError(error)) return;
      log.warn({ err: error }, "lease renewal failed; abandoning the step");
      stop("lost");
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(() => void beat(), Math.max(100, (settings.leaseSeconds * 1000) / 3));
  return () => clearInterval(timer);
}
