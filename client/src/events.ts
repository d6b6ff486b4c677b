// `client.events(chatId)`: chatEvents as an async iterator that reconnects by itself. The server replays every
// message after the cursor it is given, in id order, then streams; this iterator keeps the cursor (the last message
// rowId it yielded) and resubscribes from it after a dropped socket, a server restart, STREAM_INTERRUPTED or UNAVAILABLE, and
// drops any message at or below the cursor, so no message is repeated or skipped across reconnects.
import { CHAT_EVENTS } from "./documents.ts";
import { ChatdAuthError, ChatdError, ChatdNetworkError, requestError, type GraphQLErrorEntry } from "./errors.ts";
import { toEvent } from "./normalize.ts";
import type { GraphQLResult, Transport } from "./transport.ts";
import type { ChatEvent } from "./types.ts";

export interface EventsOptions {
  /** Start after this message rowId (all messages when omitted). */
  afterMessageId?: string | number | bigint | null;
  /** Ends the iteration (the pending `next()` rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Reconnect attempts in a row before giving up with ChatdNetworkError (default: no limit). */
  maxReconnects?: number;
}

type Item = { kind: "data"; value: GraphQLResult<{ chatEvents: Record<string, unknown> }> }
  | { kind: "error"; error: unknown } | { kind: "complete" };

/** A buffer between graphql-ws callbacks and the iterator, so no event is lost while the consumer is busy. */
class Inbox {
  private readonly items: Item[] = [];
  private waiter: ((item: Item) => void) | null = null;

  push(item: Item): void {
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = null;
      resolve(item);
    } else {
      this.items.push(item);
    }
  }

  next(signal?: AbortSignal): Promise<Item> {
    const item = this.items.shift();
    if (item) return Promise.resolve(item);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiter = null;
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiter = (value) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
    });
  }
}

/** graphql-ws close codes that no reconnect can fix: bad request, unauthorized, forbidden. */
const PERMANENT_CLOSE = new Set([4400, 4401, 4403]);

/** Returns the error to throw, or null when the stream should reconnect. */
function permanentError(error: unknown): Error | null {
  if (Array.isArray(error)) return streamErrors(error as GraphQLErrorEntry[]);
  // The client's own errors (no WebSocket implementation, a token function that threw one) do not heal by retrying.
  if (error instanceof ChatdError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "number" && PERMANENT_CLOSE.has(code)) {
    const reason = String((error as { reason?: unknown }).reason ?? "refused");
    return code === 4400 ? new ChatdNetworkError(`chatd closed the stream: ${reason}`, null, error)
      : new ChatdAuthError([{ message: reason, extensions: { code: "UNAUTHENTICATED" } }], error);
  }
  return null;
}

// UNAVAILABLE is chatd's database failing over or restarting under the stream: the replay from the cursor makes a
// resubscription lose nothing, as after STREAM_INTERRUPTED.
const RECONNECT_CODES = new Set(["STREAM_INTERRUPTED", "UNAVAILABLE"]);

function streamErrors(errors: GraphQLErrorEntry[]): Error | null {
  if (errors.every((entry) => RECONNECT_CODES.has(String(entry.extensions?.code)))) return null;
  return requestError(errors);
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export async function* chatEvents(transport: Transport, chatId: string, options: EventsOptions = {}): AsyncGenerator<ChatEvent> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? Infinity;
  let cursor = options.afterMessageId == null ? null : BigInt(options.afterMessageId);
  let failures = 0;
  let reconnected = false;
  for (;;) {
    const inbox = new Inbox();
    const dispose = transport.subscribe<{ chatEvents: Record<string, unknown> }>(CHAT_EVENTS,
      { chatId, after: cursor === null ? null : cursor.toString() }, {
        next: (value) => inbox.push({ kind: "data", value }),
        error: (error) => inbox.push({ kind: "error", error }),
        complete: () => inbox.push({ kind: "complete" }),
      });
    let lastError: unknown = null;
    try {
      for (;;) {
        const item = await inbox.next(signal);
        if (item.kind === "complete") break;
        if (item.kind === "error") {
          const fatal = permanentError(item.error);
          if (fatal) throw fatal;
          lastError = item.error;
          break;
        }
        if (item.value.errors && item.value.errors.length > 0) {
          const fatal = streamErrors(item.value.errors);
          if (fatal) throw fatal;
          lastError = item.value.errors;
          break;
        }
        const raw = item.value.data?.chatEvents;
        if (!raw) continue;
        const event = toEvent(raw);
        failures = 0;
        if (reconnected) {
          reconnected = false;
          yield { ...event, type: "previewReset", message: null, part: null, status: null, archived: null,
            pendingToolCalls: null, retry: null, reconnected: true };
        }
        if (event.type === "message" && event.message) {
          const id = BigInt(event.message.rowId);
          if (cursor !== null && id <= cursor) continue;
          cursor = id;
        }
        yield event;
      }
    } finally {
      dispose();
    }
    failures += 1;
    if (failures > maxReconnects) throw new ChatdNetworkError(`the chat stream failed ${failures} times in a row`, null, lastError);
    // 250 ms, doubling, at most 5 s, with jitter so that many clients of a restarted server do not return at once.
    await delay(Math.min(5_000, 250 * 2 ** (failures - 1)) * (0.5 + Math.random() / 2), signal);
    reconnected = true;
  }
}
