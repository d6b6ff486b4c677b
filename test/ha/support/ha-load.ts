// Load for the HA fault test, as an application drives chatd: structured requests through @chatd/client, each with
// its own idempotency key, each followed on the chat's live event stream until its receipt; one chat whose stream
// stays open through every failover; and a probe that commits a row through HAProxy every 20 ms, whose longest
// stretch without a commit around an event is that event's write gap.
import { ChatdError, ChatdNetworkError, type ChatdClient, type ChatInput, type ChatMessage } from "@chatd/client";
import pg from "pg";

const SCHEMA = { type: "object", properties: { files: { type: "integer" } }, required: ["files"], additionalProperties: false };
const FORMAT = { type: "json_schema" as const, json_schema: { name: "listing", schema: SCHEMA } };

/** The client gives up after ~10 s of UNAVAILABLE or no answer; the application sends again with the same key. */
function retryable(error: unknown): boolean {
  return error instanceof ChatdNetworkError || (error instanceof ChatdError && error.code === "UNAVAILABLE");
}

export interface Sent {
  key: string;
  input: ChatInput;
  /** The message rowIds the live stream delivered after the input, up to and including the receipt. */
  streamed: string[];
}

/** Sends `write` with one key until chatd acknowledges it; every give-up of the client is counted in `retries`. */
async function acknowledged(write: () => Promise<ChatInput>, retries: { at: number; error: string }[], signal: AbortSignal, deadlineMs = 120_000)
  : Promise<ChatInput> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!retryable(error) || Date.now() > deadline || signal.aborted) throw error;
      retries.push({ at: Date.now(), error: String(error) });
    }
  }
}

/**
 * Follows the chat's stream after `after`, passing each message to `onMessage` until it returns true. The client's
 * stream reconnects by itself; should it throw a retryable error instead, the stream is opened again from the last
 * message it delivered (what an application would have to do) and the error is recorded in `broken`.
 */
async function follow(client: ChatdClient, chatId: string, after: string | null, signal: AbortSignal,
  onMessage: (message: ChatMessage) => boolean, broken: { at: number; error: string }[]): Promise<void> {
  let cursor = after;
  for (;;) {
    try {
      for await (const event of client.events(chatId, { afterMessageId: cursor, signal })) {
        if (event.type !== "message" || event.message == null) continue;
        cursor = event.message.rowId;
        if (onMessage(event.message)) return;
      }
      throw new Error(`the stream of chat ${chatId} ended by itself`);
    } catch (error) {
      if (signal.aborted || !retryable(error)) throw error;
      broken.push({ at: Date.now(), error: String(error) });
      // Paced as the client's own reconnects are (250 ms), so that an outage does not become a request loop.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

export interface Load {
  readonly sent: Sent[];
  /** Writes the client gave up on (then sent again with the same key), by time. */
  readonly retries: { at: number; error: string }[];
  /** Streams that threw a retryable error instead of reconnecting by themselves (then opened again), by time. */
  readonly streamBroken: { at: number; error: string }[];
  /** The chat whose stream stays open from its first message to the end, and what that stream delivered. */
  readonly longChat: () => { chatId: string; streamed: string[] } | undefined;
  /** Ends the senders after their current request; rejects with the first failure of any of them. */
  stop(): Promise<void>;
  /** Ends every request and stream at once (a failed test), so that nothing keeps the process alive. */
  abort(): void;
  /** The first failure of a sender (a refused write, a stream that threw), as soon as it happens. */
  failure(): Error | undefined;
}

/**
 * `senders` loops each creating a chat with a structured request running `script`, and one loop sending
 * structured requests one after another to a single chat followed by one stream for the whole run.
 */
export function startLoad(client: ChatdClient, senders: number, script: string): Load {
  const aborted = new AbortController();
  const signal = aborted.signal;
  const sent: Sent[] = [];
  const retries: { at: number; error: string }[] = [];
  const streamBroken: { at: number; error: string }[] = [];
  let stopped = false;
  let long: { chatId: string; streamed: string[] } | undefined;
  const creator = async (index: number) => {
    for (let n = 0; !stopped; n += 1) {
      const key = `ha-create-${index}-${n}`;
      const input = await acknowledged(() => client.chats.create({ prompt: script, responseFormat: FORMAT, workspace: "ws", idempotencyKey: key }, signal), retries, signal);
      const entry: Sent = { key, input, streamed: [] };
      sent.push(entry);
      await follow(client, input.chatId, input.messageId, signal, (message) => {
        entry.streamed.push(message.rowId);
        return message.kind === "receipt" && message.structuredOutputRequestId === input.structuredOutputRequestId;
      }, streamBroken);
    }
  };
  const longRunning = async () => {
    const first = await acknowledged(() => client.chats.create({ prompt: script, responseFormat: FORMAT, workspace: "ws", idempotencyKey: "ha-long-0" }, signal), retries, signal);
    sent.push({ key: "ha-long-0", input: first, streamed: [] });
    const chat = { chatId: first.chatId, streamed: [] as string[] };
    long = chat;
    const receipts = new Map<string, () => void>();
    const seen = new Set<string>();
    const abort = new AbortController();
    signal.addEventListener("abort", () => abort.abort(), { once: true });
    // One stream from the chat's beginning to the end of the run, across every failover.
    const follower = follow(client, chat.chatId, null, abort.signal, (message) => {
      chat.streamed.push(message.rowId);
      const requestId = message.kind === "receipt" ? message.structuredOutputRequestId : null;
      if (requestId != null) {
        seen.add(requestId);
        receipts.get(requestId)?.();
      }
      return false;
    }, streamBroken).catch((error: unknown) => {
      if (!abort.signal.aborted) throw error;
    });
    const receipt = (requestId: string) => seen.has(requestId) ? Promise.resolve()
      : new Promise<void>((resolve) => receipts.set(requestId, resolve));
    try {
      await Promise.race([receipt(first.structuredOutputRequestId!), follower]);
      for (let n = 1; !stopped; n += 1) {
        const key = `ha-long-${n}`;
        const input = await acknowledged(() => client.chats.send(chat.chatId, { prompt: script, responseFormat: FORMAT, idempotencyKey: key }, signal), retries, signal);
        sent.push({ key, input, streamed: [] });
        await Promise.race([receipt(input.structuredOutputRequestId!), follower]);
      }
    } finally {
      abort.abort();
      await follower;
    }
  };
  let failed: Error | undefined;
  const loops = [...Array.from({ length: senders }, (_, i) => creator(i)), longRunning()].map((loop) => loop.catch((error: unknown) => {
    // Named by its class and code only: the test's waits pass over errors whose message reads like a lost connection.
    failed ??= new Error(`a sender failed: ${(error as Error).name} ${String((error as { code?: unknown }).code)}`, { cause: error });
    throw error;
  }));
  // A failing loop must not go unnoticed until stop(): failure() reports it at once, stop() throws it.
  const all = Promise.all(loops);
  all.catch(() => undefined);
  return {
    sent, retries, streamBroken,
    longChat: () => long,
    failure: () => failed,
    async stop() {
      stopped = true;
      await all;
    },
    abort() {
      stopped = true;
      aborted.abort();
    },
  };
}

/** Commits a row through HAProxy every 20 ms on one connection, opened again after any error. */
export class WriteProbe {
  private readonly commits: number[] = [];
  private readonly failures: number[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(url: string) {
    this.loop = this.run(url);
  }

  private async run(url: string): Promise<void> {
    let client: pg.Client | undefined;
    while (this.running) {
      try {
        if (client == null) {
          client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 5000 });
          client.on("error", () => undefined);
          await client.connect();
          await client.query("create table if not exists ha_probe (at timestamptz not null default clock_timestamp())");
        }
        await client.query("insert into ha_probe default values");
        this.commits.push(Date.now());
      } catch {
        this.failures.push(Date.now());
        await client?.end().catch(() => undefined);
        client = undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client?.end().catch(() => undefined);
  }

  failedSince(at: number): boolean {
    return this.failures.some((t) => t >= at);
  }

  /** The longest time without a commit between `from` and `to` (ms), and the failed attempts in it. */
  gap(from: number, to: number): { ms: number; failures: number } {
    const inside = this.commits.filter((t) => t >= from && t <= to);
    const before = this.commits.filter((t) => t < from).at(-1) ?? from;
    let ms = 0;
    let previous = before;
    for (const t of inside) {
      ms = Math.max(ms, t - previous);
      previous = t;
    }
    return { ms, failures: this.failures.filter((t) => t >= from && t <= to).length };
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}
