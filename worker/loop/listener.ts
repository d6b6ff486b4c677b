// One LISTEN connection per worker process, shared by every running chat. Runs `watch` their chat on
// `chatd:worker`, the channel the transitions send what a running step must hear at once (an interrupt, an edit
// under it: sql/010 notify_chat), listened to once per connection, so taking a chat costs no LISTEN. Waits that need
// every change of a chat (a parent waiting on its subagent) `subscribe` to `chatd:chat:<id>`. A lost connection is
// re-opened, waiting for the database when it is away; the lease heartbeat (lease-keeper.ts) also reads the status,
// so a missed notification delays an interrupt by at most one beat.
//
// A channel nobody listens to any more is dropped lazily: its UNLISTEN travels with the next LISTEN (one round
// trip per run instead of two), or after UNLISTEN_DELAY_MS when no LISTEN comes. Until then its notifications
// arrive and are ignored; a subscriber that comes back meanwhile needs no LISTEN at all.
import pg from "pg";
import type { Logger } from "../../src/log.ts";
import { chatChannel, WORKER_CHANNEL } from "../../src/channels.ts";
import { DatabaseHealth, isConnectionError, KEEPALIVE } from "../../src/db/pool.ts";

export interface ChatNotification {
  chat_id?: string;
  status?: string;
  change?: string;
  history_version?: number | string;
  generation_attempt?: number | string;
}

type Handler = (notification: ChatNotification) => void;

const UNLISTEN_DELAY_MS = 1000;

export { WORKER_CHANNEL } from "../../src/channels.ts";

export class ChatListener {
  private readonly databaseUrl: string;
  private readonly log: Logger;
  private readonly health: DatabaseHealth;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Runs watching a chat, by chat id (fed from WORKER_CHANNEL). */
  private readonly watchers = new Map<string, Set<Handler>>();
  private closed = false;
  /** LISTEN/UNLISTEN run one at a time on the shared client (pg deprecates overlapping queries on one client). */
  private statements: Promise<unknown> = Promise.resolve();
  /** Channels without handlers that the current client still listens to. */
  private readonly unlistening = new Set<string>();
  private unlistenTimer: ReturnType<typeof setTimeout> | undefined;

  private serial(run: () => Promise<unknown>): Promise<unknown> {
    const next = this.statements.then(run, run);
    this.statements = next.catch(() => undefined);
    return next;
  }

  constructor(databaseUrl: string, log: Logger, health: DatabaseHealth = new DatabaseHealth(log)) {
    this.databaseUrl = databaseUrl;
    this.log = log;
    this.health = health;
  }

  private async connect(): Promise<pg.Client> {
    if (this.client != null) return this.client;
    // While the database is away this waits for it (DatabaseHealth: backoff, one log line per outage).
    this.connecting ??= this.health.retry(() => this.open()).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.databaseUrl, ...KEEPALIVE });
    client.on("notification", (message) => this.dispatch(message.channel, message.payload));
    client.on("error", (error) => {
      if (this.client !== client) return;
      if (isConnectionError(error)) this.health.failed(error);
      else this.log.warn({ err: error }, "listen connection failed; reconnecting");
      this.client = undefined;
      this.unlistening.clear();
      client.end().catch(() => undefined);
      if (!this.closed) void this.relisten();
    });
    try {
      await client.connect();
      await client.query(`listen ${pg.escapeIdentifier(WORKER_CHANNEL)}`);
      for (const channel of this.handlers.keys()) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      client.end().catch(() => undefined);
      throw new Error("the listener is closed");
    }
    this.client = client;
    return client;
  }

  private async relisten(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      if (!this.closed) this.log.warn({ err: error }, "listen reconnect failed; heartbeats still carry the chat status");
    }
  }

  private dispatch(channel: string, payload: string | undefined): void {
    const worker = channel === WORKER_CHANNEL;
    if (!worker && !this.handlers.has(channel)) return;
    let notification: ChatNotification;
    try {
      notification = JSON.parse(payload ?? "{}") as ChatNotification;
    } catch {
      return;
    }
    const handlers = worker ? this.watchers.get(String(notification.chat_id)) : this.handlers.get(channel);
    for (const handler of handlers ?? []) handler(notification);
  }

  /** Hears what a running step of `chatId` must hear at once (WORKER_CHANNEL). Listening has started when it
   * returns, so a change committed afterwards is never missed; no statement is sent once the connection is open. */
  async watch(chatId: string, handler: Handler): Promise<() => void> {
    let set = this.watchers.get(chatId);
    if (set == null) {
      set = new Set();
      this.watchers.set(chatId, set);
    }
    set.add(handler);
    await this.connect();
    const handlers = set;
    return () => {
      handlers.delete(handler);
      if (handlers.size === 0 && this.watchers.get(chatId) === handlers) this.watchers.delete(chatId);
    };
  }

  /** Starts listening before it returns, so a change committed afterwards is never missed. */
  async subscribe(chatId: string, handler: Handler): Promise<() => Promise<void>> {
    const channel = chatChannel(chatId);
    let set = this.handlers.get(channel);
    const first = set == null;
    if (set == null) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    // Still listened to (its UNLISTEN was deferred): nothing to send.
    const listening = first && this.client != null && this.unlistening.delete(channel);
    const client = await this.connect();
    if (first && !listening) {
      await this.serial(() => client.query([...this.takeUnlistens(), `listen ${pg.escapeIdentifier(channel)}`].join("; ")));
    }
    return async () => {
      set.delete(handler);
      if (set.size > 0 || this.handlers.get(channel) !== set) return;
      this.handlers.delete(channel);
      if (this.client == null) return;
      this.unlistening.add(channel);
      if (this.unlistenTimer == null) {
        this.unlistenTimer = setTimeout(() => void this.flushUnlistens(), UNLISTEN_DELAY_MS);
        this.unlistenTimer.unref();
      }
    };
  }

  /** The deferred UNLISTEN statements, taken out of the set (a later subscriber then sends LISTEN again). */
  private takeUnlistens(): string[] {
    const statements = [...this.unlistening].map((channel) => `unlisten ${pg.escapeIdentifier(channel)}`);
    this.unlistening.clear();
    return statements;
  }

  private async flushUnlistens(): Promise<void> {
    this.unlistenTimer = undefined;
    const current = this.client;
    if (current == null || this.unlistening.size === 0) return;
    await this.serial(() => {
      const statements = this.takeUnlistens();
      return statements.length === 0 ? Promise.resolve() : current.query(statements.join("; "));
    }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.unlistenTimer);
    this.unlistenTimer = undefined;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
