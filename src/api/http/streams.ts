// What one caller may make the server hold by opening streams: a cap on the streams open at once per user and per
// process (a refused stream is 429 TOO_MANY_STREAMS, before the request has any effect), and, per stream, a
// sender that waits for the client to read (back-pressure: the producer awaits `drained()` instead of buffering)
// and drops a client that has not drained within the send deadline, freeing its buffers. A stream also ends when
// the token that opened it expires.
import type { ServerResponse } from "node:http";
import { HttpError } from "./errors.ts";

export interface StreamLimits {
  /** Streams one user may hold open at once (CHATD_STREAMS_PER_USER). */
  perUser: number;
  /** Streams this process holds open at once, all users together (CHATD_STREAMS_PER_PROCESS). */
  perProcess: number;
  /** How long a client may leave a full send buffer unread before it is dropped (CHATD_STREAM_SEND_DEADLINE_MS). */
  sendDeadlineMs: number;
}

export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ perUser: 16, perProcess: 1000, sendDeadlineMs: 30_000 });

/** A positive integer setting, or `fallback` when unset; anything else throws (a bad value stops the start). */
export function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** The limits from the environment; a bad value stops the start instead of failing each stream. */
export function streamLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): StreamLimits {
  return {
    perUser: positive(env, "CHATD_STREAMS_PER_USER", DEFAULT_STREAM_LIMITS.perUser),
    perProcess: positive(env, "CHATD_STREAMS_PER_PROCESS", DEFAULT_STREAM_LIMITS.perProcess),
    sendDeadlineMs: positive(env, "CHATD_STREAM_SEND_DEADLINE_MS", DEFAULT_STREAM_LIMITS.sendDeadlineMs),
  };
}

export interface StreamLease {
  /** Idempotent. */
  release(): void;
}

export class StreamRegistry {
  readonly limits: StreamLimits;
  private readonly byUser = new Map<string, number>();
  private total = 0;

  constructor(limits: StreamLimits) {
    this.limits = limits;
  }

  get open(): number {
    return this.total;
  }

  /** A slot for one stream of `userId`, or 429 TOO_MANY_STREAMS. */
  acquire(userId: string): StreamLease {
    const mine = this.byUser.get(userId) ?? 0;
    if (mine >= this.limits.perUser) {
      throw new HttpError(429, "TOO_MANY_STREAMS", `at most ${this.limits.perUser} streams may be open per user; close one first`,
        [], { "retry-after": "1" });
    }
    if (this.total >= this.limits.perProcess) {
      throw new HttpError(429, "TOO_MANY_STREAMS", "this server holds as many streams as it may; retry shortly", [], { "retry-after": "1" });
    }
    this.byUser.set(userId, mine + 1);
    this.total += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = (this.byUser.get(userId) ?? 1) - 1;
        if (left === 0) this.byUser.delete(userId);
        else this.byUser.set(userId, left);
      },
    };
  }
}

export type StreamEnd = "finished" | "client-gone" | "send-deadline" | "token-expired";

export interface SenderOptions {
  sendDeadlineMs: number;
  /** When the stream must end (the token's exp), epoch milliseconds. */
  expiresAtMs?: number;
}

/**
 * Writes a stream's text to a response whose head is already written. `signal` aborts, with a StreamEnd as its
 * reason, when the client goes, is dropped, or the token expires; the producer stops then.
 */
export class BoundedSender {
  private readonly res: ServerResponse;
  private readonly options: SenderOptions;
  private readonly controller = new AbortController();
  private readonly expiry: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, options: SenderOptions) {
    this.res = res;
    this.options = options;
    res.once("close", () => this.stop("client-gone"));
    if (options.expiresAtMs !== undefined) {
      // setTimeout's delay is a 32-bit int; a longer wait is re-armed by the lifetime cap long before it matters.
      const delay = Math.min(Math.max(0, options.expiresAtMs - Date.now()), 2 ** 31 - 1);
      this.expiry = setTimeout(() => this.stop("token-expired"), delay);
      this.expiry.unref();
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get ended(): StreamEnd | null {
    return this.controller.signal.aborted ? this.controller.signal.reason as StreamEnd : null;
  }

  private stop(reason: StreamEnd): void {
    clearTimeout(this.expiry);
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Queues text; false once the stream has ended. Callers await drained() between events. */
  write(text: string): boolean {
    if (this.ended !== null || this.res.destroyed) return false;
    this.res.write(text);
    return true;
  }

  /** Resolves true once the client has read what was queued (or at once if little is queued); false, with the
   * connection destroyed and its buffers freed, when it did not within the send deadline. */
  drained(): Promise<boolean> {
    if (this.ended !== null) return Promise.resolve(false);
    if (!this.res.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.res.off("drain", onDrain);
        this.controller.signal.removeEventListener("abort", onAbort);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => {
        this.stop("send-deadline");
        this.res.destroy();
        done(false);
      }, this.options.sendDeadlineMs);
      this.res.on("drain", onDrain);
      this.controller.signal.addEventListener("abort", onAbort);
    });
  }

  /** Ends the response (a no-op on a dropped one). */
  end(text?: string): void {
    this.stop("finished");
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end(text);
  }
}
