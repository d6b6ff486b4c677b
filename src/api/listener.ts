// LISTEN/NOTIFY for chat streams on one dedicated connection. Unlike PostGraphile's PgSubscriber, `subscribe`
// resolves only once the LISTEN has been executed, which the stream contract needs ("LISTEN first, then read"):
// a row committed after the read is then always announced. Topics are reference-counted. If the connection is
// lost every subscription ends with an error; clients resubscribe with `afterMessageId` and miss nothing.
import pg from "pg";
import { isConnectionError, KEEPALIVE } from "../db/pool.ts";
import { logger } from "../log.ts";

export interface Notification {
  channel: string;
  payload: string;
}

export interface Subscription {
  /** Resolves with the next notification on any of its topics, or rejects once closed or failed. */
  next(): Promise<Notification>;
  close(): Promise<void>;
}

interface Waiter {
  resolve(notification: Notification): void;
  reject(error: Error): void;
}

class TopicSubscription implements Subscription {
  private readonly buffered: Notification[] = [];
  private waiter: Waiter | null = null;
  private failure: Error | null = null;
  private readonly listener: ChatListener;
  readonly topics: string[];
  closed = false;

  constructor(listener: ChatListener, topics: string[]) {
    this.listener = listener;
    this.topics = topics;
  }

  push(notification: Notification): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve(notification);
    } else {
      this.buffered.push(notification);
    }
  }

  fail(error: Error): void {
    this.failure = error;
    this.waiter?.reject(error);
    this.waiter = null;
  }

  next(): Promise<Notification> {
    const notification = this.buffered.shift();
    if (notification !== undefined) return Promise.resolve(notification);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => { this.waiter = { resolve, reject }; });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fail(new Error("subscription closed"));
    await this.listener.unsubscribe(this);
  }
}

export class ChatListener {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly topics = new Map<string, Set<TopicSubscription>>();
  /** LISTEN/UNLISTEN statements run one at a time on the single connection. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly connectionString: string;

  constructor(connectionString: string) {
    this.connectionString = connectionString;
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString, ...KEEPALIVE });
      client.on("notification", (message) => {
        for (const subscription of this.topics.get(message.channel) ?? []) subscription.push({ channel: message.channel, payload: message.payload ?? "" });
      });
      client.on("error", (error) => this.lost(client, error));
      client.on("end", () => this.lost(client, new Error("the listening connection ended")));
      await client.connect();
      this.client = client;
      return client;
    })().finally(() => { this.connecting = null; });
    return this.connecting;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    logger.warn({ err: error }, "chat stream listener lost its connection; open streams end");
    for (const set of this.topics.values()) for (const subscription of set) subscription.fail(error);
    this.topics.clear();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  /** Resolves once every topic is LISTENed to (channel names are at most 63 bytes). */
  async subscribe(topics: string[]): Promise<Subscription> {
    const subscription = new TopicSubscription(this, topics);
    await this.serial(async () => {
      const client = await this.connect();
      try {
        for (const topic of topics) {
          let set = this.topics.get(topic);
          if (!set) {
            set = new Set();
            this.topics.set(topic, set);
            await client.query(`LISTEN ${client.escapeIdentifier(topic)}`);
          }
          set.add(subscription);
        }
      } catch (error) {
        // A connection that reached a standby ("cannot execute LISTEN during recovery") would refuse every LISTEN:
        // it goes, and the next subscription connects again (through the proxy, to the new primary).
        if (isConnectionError(error)) {
          this.lost(client, error as Error);
          client.end().catch(() => {});
        }
        throw error;
      }
    });
    return subscription;
  }

  async unsubscribe(subscription: TopicSubscription): Promise<void> {
    await this.serial(async () => {
      for (const topic of subscription.topics) {
        const set = this.topics.get(topic);
        if (!set?.delete(subscription) || set.size > 0) continue;
        this.topics.delete(topic);
        await this.client?.query(`UNLISTEN ${this.client.escapeIdentifier(topic)}`).catch(() => {});
      }
    });
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    for (const set of this.topics.values()) for (const subscription of set) subscription.fail(new Error("server shutting down"));
    this.topics.clear();
    await client?.end().catch(() => {});
  }
}
