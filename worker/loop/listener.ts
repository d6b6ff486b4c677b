// One LISTEN connection per worker process, shared by every running chat: the transitions NOTIFY on
// `chatd:chat:<id>` with the chat's status, which is how an interrupt reaches a running step within
// milliseconds. A lost connection is re-opened; the lease heartbeat also reads the status, so a missed
// notification delays an interrupt by at most one heartbeat.
import pg from "pg";
import type { Logger } from "../../src/log.ts";

export interface ChatNotification {
  status?: string;
  change?: string;
  history_version?: number | string;
  generation_attempt?: number | string;
}

type Handler = (notification: ChatNotification) => void;

export const chatChannel = (chatId: string): string => `chatd:chat:${chatId}`;

export class ChatListener {
  private readonly databaseUrl: string;
  private readonly log: Logger;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  private closed = false;
  /** LISTEN/UNLISTEN run one at a time on the shared client (pg deprecates overlapping queries on one client). */
  private statements: Promise<unknown> = Promise.resolve();

  private serial(run: () => Promise<unknown>): Promise<unknown> {
    const next = this.statements.then(run, run);
    this.statements = next.catch(() => undefined);
    return next;
  }

  constructor(databaseUrl: string, log: Logger) {
    this.databaseUrl = databaseUrl;
    this.log = log;
  }

  private async connect(): Promise<pg.Client> {
    if (this.client != null) return this.client;
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on("notification", (message) => this.dispatch(message.channel, message.payload));
      client.on("error", (error) => {
        this.log.warn({ err: error }, "listen connection failed; reconnecting");
        if (this.client === client) this.client = undefined;
        client.end().catch(() => undefined);
        if (!this.closed) void this.relisten();
      });
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async relisten(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      this.log.warn({ err: error }, "listen reconnect failed; heartbeats still carry the chat status");
    }
  }

  private dispatch(channel: string, payload: string | undefined): void {
    const handlers = this.handlers.get(channel);
    if (handlers == null) return;
    let notification: ChatNotification;
    try {
      notification = JSON.parse(payload ?? "{}") as ChatNotification;
    } catch {
      return;
    }
    for (const handler of handlers) handler(notification);
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
    const client = await this.connect();
    if (first) await this.serial(() => client.query(`listen ${pg.escapeIdentifier(channel)}`));
    return async () => {
      set.delete(handler);
      if (set.size > 0 || this.handlers.get(channel) !== set) return;
      this.handlers.delete(channel);
      const current = this.client;
      if (current != null) await this.serial(() => current.query(`unlisten ${pg.escapeIdentifier(channel)}`)).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
