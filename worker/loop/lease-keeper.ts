// The lease heartbeat of a worker process: one timer, and one statement per beat that renews the leases of all the
// process's runs and reads their chats' statuses (sql/070 renew_leases), so the writes that keep turns alive grow
// with the worker processes, not with the turns in flight. A beat comes every third of the shortest lease among the
// runs (lease_seconds is read per run, so a changed setting reaches the runs that start after it).
//
// A run is renewed only while it makes progress (watchdog.ts ProgressClock): one wedged for longer than
// progress_timeout_seconds is left out, so its lease expires and another worker takes the chat. A run that lost its
// lease is stopped "lost"; one whose chat is interrupting is stopped "interrupt" (an interrupt is seen even when its
// notification was missed). Only one beat is in flight: during an outage its statement waits for the database
// (src/db/pool.ts), and a connection error stops nothing, so the leases are renewed at the next beat once the
// database is back (a lease that ran out across a server restart gets a lease length of grace: sql/070
// sweep_expired_leases). A run registered between beats needs no renewal before the next one: its lease is new.
import type pg from "pg";
import { isConnectionError } from "../../src/db/pool.ts";
import type { Logger } from "../../src/log.ts";
import type { RuntimeSettings } from "./config.ts";
import type { ProgressClock } from "./watchdog.ts";

/** A run whose lease the keeper renews. */
export interface LeaseHolder {
  chatId: string;
  runnerId: string;
  settings: Pick<RuntimeSettings, "leaseSeconds" | "progressTimeoutMs">;
  progress: Pick<ProgressClock, "idleMs">;
  log: Logger;
  stop: (reason: "lost" | "interrupt") => void;
  stopped: () => boolean;
}

interface RenewedRow {
  runner_id: string;
  renewed: boolean | null;
  status: string | null;
}

const RENEW_LEASES = "select * from chat_private.renew_leases($1, $2, $3)";

/** The fastest beat, whatever the lease: a lease of one second is renewed every 333 ms. */
const MIN_INTERVAL_MS = 100;

export class LeaseKeeper {
  private readonly pool: pg.Pool;
  private readonly log: Logger;
  /** By runner id: a new lease of the same chat is another holder. */
  private readonly holders = new Map<string, LeaseHolder>();
  /** How many holders have each lease length: the beat follows the shortest, found among the few lengths (a pass over
   * every holder at each register was 2.8 % of the worker's samples with 1,024 runs starting at once: `perf record`
   * of the worker under `node bench/inflight.ts 1024`). */
  private readonly lengths = new Map<number, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private intervalMs = 0;
  private beating = false;

  constructor(pool: pg.Pool, log: Logger) {
    this.pool = pool;
    this.log = log;
  }

  /** Renews the holder's lease from the next beat on; returns the function that stops it. */
  register(holder: LeaseHolder): () => void {
    const replaced = this.holders.get(holder.runnerId);
    if (replaced != null) this.count(replaced.settings.leaseSeconds, -1);
    this.holders.set(holder.runnerId, holder);
    const length = holder.settings.leaseSeconds;
    this.count(length, 1);
    this.schedule();
    return () => {
      if (this.holders.get(holder.runnerId) !== holder) return;
      this.holders.delete(holder.runnerId);
      this.count(length, -1);
      this.schedule();
    };
  }

  private count(length: number, delta: 1 | -1): void {
    const n = (this.lengths.get(length) ?? 0) + delta;
    if (n === 0) this.lengths.delete(length);
    else this.lengths.set(length, n);
  }

  /** One timer while anything is held, every third of the shortest lease. */
  private schedule(): void {
    const intervalMs = this.lengths.size === 0 ? 0 : Math.max(MIN_INTERVAL_MS, (Math.min(...this.lengths.keys()) * 1000) / 3);
    if (intervalMs === this.intervalMs) return;
    clearInterval(this.timer);
    this.timer = intervalMs === 0 ? undefined : setInterval(() => void this.beat(), intervalMs);
    this.intervalMs = intervalMs;
  }

  /** One beat: the leases of the progressing runs renewed in one statement (the timer calls it; tests too). */
  async beat(): Promise<void> {
    if (this.beating) return;
    const sent: LeaseHolder[] = [];
    for (const holder of this.holders.values()) {
      const idleMs = holder.progress.idleMs();
      if (idleMs <= holder.settings.progressTimeoutMs) {
        sent.push(holder);
        continue;
      }
      // Wedged (a hung call no deadline covers): the lease is left to expire, so another worker takes the chat.
      if (!holder.stopped()) {
        holder.log.warn({ idle_ms: idleMs }, "the run made no progress within progress_timeout_seconds; its lease is left to expire");
      }
      holder.stop("lost");
    }
    if (sent.length === 0) return;
    this.beating = true;
    try {
      const { rows } = await this.pool.query<RenewedRow>({ name: "chatd_renew_leases", text: RENEW_LEASES,
        values: [sent.map((h) => h.chatId), sent.map((h) => h.runnerId), sent.map((h) => h.settings.leaseSeconds)] });
      const byRunner = new Map(rows.map((row) => [row.runner_id, row]));
      for (const holder of this.current(sent)) {
        const row = byRunner.get(holder.runnerId);
        // null: its row was busy in another transaction; the next beat sees what that transaction decided.
        if (row?.renewed === false) holder.stop("lost");
        else if (row?.status === "interrupting") holder.stop("interrupt");
      }
    } catch (error) {
      if (isConnectionError(error)) return;
      this.log.warn({ err: error, runs: sent.length }, "lease renewal failed; abandoning the steps of the runs it renews");
      for (const holder of this.current(sent)) holder.stop("lost");
    } finally {
      this.beating = false;
    }
  }

  /** The holders of a beat that are still registered (a run that ended meanwhile is no longer stopped). */
  private current(sent: LeaseHolder[]): LeaseHolder[] {
    return sent.filter((holder) => this.holders.get(holder.runnerId) === holder);
  }
}
