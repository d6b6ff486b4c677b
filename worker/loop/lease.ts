// Taking a chat's lease: acquire_lease and the first turn-state read in one round trip, with the chat's
// notifications listened to from before that statement.
import type pg from "pg";
import { turnStateFrom, type TurnStateRow } from "./history.ts";
import type { ChatListener, ChatNotification } from "./listener.ts";
import { sqlState } from "./transitions.ts";
import type { Fence, FenceRow, TurnState } from "./types.ts";

/** acquire_lease outcomes that mean "another runner has it, or there is nothing to run". */
export const NOTHING_TO_RUN = new Set(["CHLSD", "CHTRN", "CHARC", "CHNTF"]);

export interface AcquiredLease {
  fence: Fence;
  /** The turn state read right after the lease was taken, in the same round trip (sql/130_turn_state.sql). */
  state: TurnState;
  /** The worker config version the state was read with (config.ts). */
  configVersion: bigint;
}

/** Takes the lease with a fresh runner id and reads the turn state; null when there is nothing for this job to do. */
export async function acquireLease(pool: pg.Pool, chatId: string, workerId: string,
  resultCapBytes: number): Promise<AcquiredLease | null> {
  try {
    // turn_state is volatile: it runs after acquire_lease and takes its own snapshot, so it sees the new lease.
    const { rows } = await pool.query<FenceRow & { state: TurnStateRow }>({ name: "chatd_acquire_lease",
      text: "select f.*, chat_private.turn_state($1) as state from chat_private.acquire_lease($1, $2) f", values: [chatId, workerId] });
    const row = rows[0]!;
    const state = turnStateFrom(row.state, resultCapBytes);
    return {
      fence: { chatId, runnerId: row.runner_id, historyVersion: row.history_version, generationAttempt: row.generation_attempt },
      state, configVersion: state.configVersion,
    };
  } catch (error) {
    if (NOTHING_TO_RUN.has(sqlState(error) ?? "")) return null;
    throw error;
  }
}

/** Takes the lease again after this job's run was cut off by the database connection: its own lease (runner
 * `runnerId`) is released and a new one taken, so the run goes on without waiting for the lease to expire. Null
 * when another runner took the chat meanwhile or nothing is left to run. */
export async function reacquireLease(pool: pg.Pool, chatId: string, runnerId: string, workerId: string,
  resultCapBytes: number): Promise<AcquiredLease | null> {
  await pool.query("select chat_private.release_lease($1, $2)", [chatId, runnerId]);
  return acquireLease(pool, chatId, workerId, resultCapBytes);
}

type Handler = (notification: ChatNotification) => void;
/** How a run listens to its chat: registers the handler, returns the function that removes it. */
export type Subscribe = (handler: Handler) => Promise<() => Promise<void>>;

/** Listening to one chat across the leases a job takes. It starts before the first acquire, whose statement also
 * reads the turn state, so a change committed after that statement arrives as a notification; what arrives before
 * the run of the new lease registers its handler is kept and handed to it. */
export class ChatSubscription {
  private handler: Handler | undefined;
  private buffered: ChatNotification[] = [];
  private unwatch: () => void = () => undefined;

  static async open(listener: ChatListener, chatId: string): Promise<ChatSubscription> {
    const subscription = new ChatSubscription();
    subscription.unwatch = await listener.watch(chatId, (n) => subscription.deliver(n));
    return subscription;
  }

  private deliver(notification: ChatNotification): void {
    if (this.handler != null) this.handler(notification);
    else this.buffered.push(notification);
  }

  /** Before an acquire: what arrived earlier concerns an older state than the one the acquire reads. */
  beforeAcquire(): void {
    this.handler = undefined;
    this.buffered = [];
  }

  readonly subscribe: Subscribe = async (handler) => {
    this.handler = handler;
    for (const notification of this.buffered.splice(0)) handler(notification);
    return async () => {
      if (this.handler === handler) this.handler = undefined;
    };
  };

  close(): void {
    this.handler = undefined;
    this.unwatch();
  }
}
