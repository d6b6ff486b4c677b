// A pg.Pool whose failing connections are logged, never thrown. pg emits 'error' on a client whose connection fails
// between queries (idle in the pool or checked out), and pg-pool re-emits an idle client's error on the pool; an
// 'error' event without a listener ends the process. A database restart, a terminated backend or the embedded
// server stopping first at shutdown must cost the connection, not the service: the pool opens a new one for the
// next query, and a checked-out client's next query fails.
//
// With a DatabaseHealth (the worker's pools), the pool also waits for the database: a connection that cannot be
// opened (server down, starting up, "too many clients") is tried again with backoff until it opens or the pool is
// told to stop waiting, so a query issued during an outage runs when the database is back instead of failing. The
// health object writes one line when an outage starts and one when it ends, not one per query.
import pg from "pg";
import type { Logger } from "../log.ts";
import { poolerMode } from "./pooler.ts";

/** Network errors and the SQLSTATEs of a server that is gone, going, full or not the primary: the database, not the
 * statement. Behind a proxy that moves with failover (HAProxy on Patroni's /primary, a managed writer endpoint) a
 * connection can reach a node that is a standby for a few seconds (a demoted primary, a primary restarting
 * read-only before its promotion): its writes and LISTENs fail with read_only_sql_transaction (25006) although
 * nothing is wrong with the statement, and the primary is back when the proxy has moved. chatd never runs a
 * read-only transaction of its own, so 25006 always means this. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN",
  // admin_shutdown, crash_shutdown, cannot_connect_now, idle_session_timeout, too_many_connections.
  "57P01", "57P02", "57P03", "57P05", "53300",
  // connection_exception class 08 (08P01, a protocol violation, is a configuration error: not here).
  "08000", "08001", "08003", "08004", "08006", "08007",
  // read_only_sql_transaction: "cannot execute INSERT in a read-only transaction", "... LISTEN during recovery".
  "25006",
]);
/** feature_not_supported (0A000) is a connection error only as a standby's refusal ("cannot set transaction
 * read-write mode during recovery"), as Temporal's SQL persistence classifies it. */
const NOT_SUPPORTED_IN_RECOVERY = /during recovery/;
/** object_not_in_prerequisite_state (55000) is a connection error only as a standby's "recovery is in progress"
 * (pg_current_wal_lsn() and the other WAL control functions the alive report reads for the server epoch). */
const RECOVERY_IN_PROGRESS = /recovery is in progress/;
/** pg's own errors for a connection that ended, which carry no code. */
const CONNECTION_MESSAGES = /Connection terminated|Connection ended unexpectedly|not queryable|timeout exceeded when trying to connect/;

/** True when `error` says the database connection failed or reached a server that is not the primary, not that a
 * statement was refused. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error as { message?: unknown } | null)?.message;
  if (code === "0A000") return typeof message === "string" && NOT_SUPPORTED_IN_RECOVERY.test(message);
  if (code === "55000") return typeof message === "string" && RECOVERY_IN_PROGRESS.test(message);
  if (typeof code === "string") return CONNECTION_CODES.has(code);
  return typeof message === "string" && CONNECTION_MESSAGES.test(message);
}

/** TCP keepalive on every connection: a primary whose host vanished without a reset (power loss, a partition) is
 * noticed by the kernel's probes instead of leaving a connection that waits forever. */
export const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } as const;

/** A pooled client that a pool never hands out again once a statement of it failed as a connection error: a
 * connection that reached a standby keeps reaching it (the proxy moves only new connections), so it is closed on
 * release (pg-pool removes a client released with an error) instead of failing every later checkout. */
class FailoverClient extends pg.Client {
  private failedOver = false;
  private poolRelease: ((error?: Error | boolean) => void) | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.connection.on("errorMessage", (message: unknown) => {
      if (isConnectionError(message)) this.failedOver = true;
    });
  }

  // pg-pool assigns `release` on each checkout; this accessor adds the error that removes the client.
  set release(release: ((error?: Error | boolean) => void) | undefined) {
    this.poolRelease = release;
  }

  get release(): (error?: Error | boolean) => void {
    return (error) => this.poolRelease?.(error ?? (this.failedOver ? new Error("connection reached a server that is not the primary") : undefined));
  }
}

/** Behind a transaction-mode pooler (src/db/pooler.ts) a named statement parsed on one server connection is missing on
 * the next (26000) or already there (42P05): the names are dropped, so each statement is parsed where it runs. */
class UnnamedClient extends FailoverClient {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as Query;
    this.query = ((config: unknown, ...rest: unknown[]) => query(unnamed(config), ...rest)) as typeof this.query;
  }
}

function unnamed(config: unknown): unknown {
  if (config == null || typeof config !== "object" || !("name" in config) || "submit" in config) return config;
  const { name: _name, ...rest } = config as Record<string, unknown>;
  return rest;
}

const BACKOFF_MIN_MS = 100;
const QUIET_MS = 30_000;
const BACKOFF_MAX_MS = 2000;

/** Delay before attempt `n` (from 1): doubling from 100 ms to 2 s, with jitter so workers do not retry in step. */
export function backoffDelayMs(n: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(n - 1, 10)) * (0.75 + Math.random() / 2);
}

/** Whether the database is reachable, as the process last saw it; one log line per outage and one at its end. */
export class DatabaseHealth {
  private readonly log: Logger;
  private downSince: number | undefined;
  /** When the last outage line was written, and whether the current outage got one. */
  private loggedAt = -Infinity;
  private logged = false;
  private waiting = true;
  /** Until when a wait may last (Date.now() ms); Infinity once the process has started (start-up bounds it). */
  private deadline = Infinity;
  /** Outages seen (tests and metrics read it). */
  outages = 0;

  constructor(log: Logger) {
    this.log = log;
  }

  get down(): boolean {
    return this.downSince != null;
  }

  /** False once the process stops: waits end and the connection error is thrown to the caller. */
  get waits(): boolean {
    return this.waiting;
  }

  stopWaiting(): void {
    this.waiting = false;
  }

  /** Bounds every wait until `deadline` (Date.now() ms; Infinity: unbounded). */
  waitUntil(deadline: number): void {
    this.deadline = deadline;
  }

  failed(error: unknown): void {
    if (this.downSince != null) return;
    const now = Date.now();
    this.downSince = now;
    this.outages += 1;
    // Connections that were open when the server went away fail one by one, some only after it is back: failures
    // within QUIET_MS of the last logged outage belong to it and get no line of their own.
    this.logged = now - this.loggedAt > QUIET_MS;
    if (!this.logged) return;
    this.loggedAt = now;
    const code = (error as { code?: unknown } | null)?.code;
    this.log.warn({ code, error: (error as { message?: unknown } | null)?.message },
      "database unreachable: waiting for it (queries retry with backoff; running chats keep their leases)");
  }

  ok(): void {
    if (this.downSince == null) return;
    if (this.logged) this.log.info({ down_ms: Date.now() - this.downSince }, "database reachable again");
    this.downSince = undefined;
  }

  /** Runs `attempt` until it succeeds or fails with something other than a connection error; waits with backoff. */
  async retry<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n += 1) {
      try {
        const value = await attempt();
        this.ok();
        return value;
      } catch (error) {
        if (!isConnectionError(error) || !this.waiting || Date.now() >= this.deadline) throw error;
        this.failed(error);
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(n)));
      }
    }
  }
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;
type Query = (...args: unknown[]) => Promise<unknown>;

/** What connect() hands out with `retryStatements`: a checkout whose statement, failing on its connection, is sent
 * again on a new one. The failed connection is released (and closed) before the next is taken, so a checkout never
 * holds two: retrying on a second connection while holding the first deadlocks a small pool once every connection
 * is held by a checkout waiting for another (Graphile Worker's fetch, completion, failure and LISTEN at once, after
 * a read-only window). Only query() and release() exist, the two that Graphile Worker's job statements use. */
class RetryingCheckout {
  private readonly pool: WaitingPool;
  private readonly health: DatabaseHealth;
  private client: pg.PoolClient | undefined;
  private released = false;

  constructor(pool: WaitingPool, health: DatabaseHealth, client: pg.PoolClient) {
    this.pool = pool;
    this.health = health;
    this.client = client;
  }

  query(...args: unknown[]): Promise<unknown> {
    return this.health.retry(async () => {
      if (this.released) throw new Error("query on a checkout that was released");
      this.client ??= await this.pool.openOne();
      const client = this.client;
      try {
        return await (client.query as Query)(...args);
      } catch (error) {
        if (isConnectionError(error)) {
          this.client = undefined;
          client.release(error as Error);
        }
        throw error;
      }
    });
  }

  release(error?: Error | boolean): void {
    if (this.released) throw new Error("Release called on a checkout that was already released");
    this.released = true;
    const client = this.client;
    this.client = undefined;
    client?.release(error);
  }
}

/** A pool whose connect() waits for the database (see the top of the file). With `retryStatements`, connect() returns
 * a RetryingCheckout: only for callers whose every statement is one autocommit statement that may be sent again
 * (Graphile Worker's job fetches, completions and failures). The callback form (pool.query, Graphile Worker's LISTEN
 * and cron) always gets a plain client. */
class WaitingPool extends pg.Pool {
  private readonly health: DatabaseHealth;
  private readonly retryStatements: () => boolean;

  constructor(options: pg.PoolConfig, health: DatabaseHealth, retryStatements: () => boolean) {
    super(options);
    this.health = health;
    this.retryStatements = retryStatements;
  }

  /** One connection, waiting for the database through an outage. */
  openOne(): Promise<pg.PoolClient> {
    return this.health.retry(() => {
      if (this.ending) return Promise.reject(new Error("Cannot use a pool after calling end on the pool"));
      return super.connect();
    });
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const opened = this.openOne();
    if (callback == null) {
      return opened.then((client) => this.retryStatements()
        ? new RetryingCheckout(this, this.health, client) as unknown as pg.PoolClient : client);
    }
    opened.then((client) => callback(undefined, client, (release) => client.release(release as Error | undefined)),
      (error: Error) => callback(error, undefined, () => undefined));
  }
}

export interface Resilience {
  health: DatabaseHealth;
  /** See WaitingPool; read per checkout, so it can be turned on after start-up (default off). */
  retryStatements?: () => boolean;
}

/** `pooled`: a pool that a transaction-mode pooler may serve (CHATD_DATABASE_POOLER): its statements go unnamed. */
export function createPool(options: { connectionString: string; max: number; pooled?: boolean }, log: Logger, purpose: string,
  resilience?: Resilience): pg.Pool {
  const { pooled, ...connection } = options;
  const config: pg.PoolConfig = { ...connection, ...KEEPALIVE,
    Client: pooled === true && poolerMode() === "transaction" ? UnnamedClient : FailoverClient };
  const pool = resilience == null ? new pg.Pool(config)
    : new WaitingPool(config, resilience.health, resilience.retryStatements ?? (() => false));
  pool.on("connect", (client) => client.on("error", (error) => {
    // During an outage every pooled connection fails at once; the health line above stands for all of them.
    if (resilience != null && isConnectionError(error)) resilience.health.failed(error);
    else log.warn({ err: error, pool: purpose }, "database connection failed");
  }));
  // The client's own listener above has logged it already.
  pool.on("error", (error) => log.debug({ err: error, pool: purpose }, "idle connection removed from the pool"));
  return pool;
}
