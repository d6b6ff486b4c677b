// The event stream behind `chatEvents`. It LISTENs first (chat hints and part deltas), then reads,
// as the caller under RLS, the chat and every message newer than its watermark. Reading is driven by
// `snapshot_version` (bumped by every transition, receipts included); a hint is only a reason to read and never
// advances the watermark by itself. The preview (part deltas) belongs to one (history_version,
// generation_attempt) episode: when either moves, `previewReset` is emitted and older deltas are dropped. A
// receipt-only transition moves neither, so it never resets the preview.
import { SafeError } from "postgraphile/grafast";
import { chatChannel, partsChannel } from "../channels.ts";
import { refusalError } from "./errors.ts";
import type { ChatListener, Notification, Subscription } from "./listener.ts";

export type ChatEventType = "message" | "messagePart" | "status" | "queueUpdate" | "actionRequired" | "retry"
  | "previewReset" | "historyReset";

export interface ChatEventValue {
  type: ChatEventType;
  chatId: string;
  snapshotVersion: string;
  historyVersion: string;
  generationAttempt: string;
  queueVersion: string;
  messageId: string | null;
  status: string | null;
  archived: boolean | null;
  pendingToolCalls: unknown;
  retry: unknown;
  part: { historyVersion: string; generationAttempt: string; seq: string; data: unknown } | null;
  /** Set on queueUpdate only, so that the `queue` field reads the queue then and stays empty otherwise. */
  queueChatId: string | null;
}

interface PgQueryClient {
  query<T>(options: { text: string; values?: unknown[] }): Promise<{ rows: readonly T[] }>;
}

export interface StreamDeps {
  listener: ChatListener;
  /** Runs `fn` in a transaction with the request's pgSettings (role, jwt.claims.sub), i.e. under RLS. */
  withClient<T>(fn: (client: PgQueryClient) => Promise<T>): Promise<T>;
}

interface ChatRow {
  status: string;
  archived: boolean;
  snapshot_version: string;
  history_version: string;
  generation_attempt: string;
  queue_version: string;
  retry_state: unknown;
  pending_tool_calls: unknown;
}

const PAGE = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const big = (value: string) => BigInt(value);

/** Orders (history_version, generation_attempt) episodes. */
function compareEpisode(a: [string, string], b: [string, string]): number {
  const history = big(a[0]) - big(b[0]);
  if (history !== 0n) return history < 0n ? -1 : 1;
  const attempt = big(a[1]) - big(b[1]);
  return attempt === 0n ? 0 : attempt < 0n ? -1 : 1;
}

const notFound = () => refusalError({ sqlState: "CHNTF", message: "chat not found" }) ?? new SafeError("chat not found");

class ChatStream {
  private readonly deps: StreamDeps;
  private readonly chatId: string;
  private watermark: string;
  private chat: ChatRow | null = null;
  private episode: [string, string] = ["0", "0"];

  constructor(deps: StreamDeps, chatId: string, afterMessageId: string | null) {
    this.deps = deps;
    this.chatId = chatId;
    this.watermark = afterMessageId ?? "0";
  }

  private event(type: ChatEventType, extra: Partial<ChatEventValue> = {}): ChatEventValue {
    const chat = this.chat!;
    return {
      type, chatId: this.chatId, snapshotVersion: chat.snapshot_version, historyVersion: chat.history_version,
      generationAttempt: chat.generation_attempt, queueVersion: chat.queue_version, messageId: null, status: null,
      archived: null, pendingToolCalls: null, retry: null, part: null, queueChatId: null, ...extra,
    };
  }

  /** Reads the chat and the messages above the watermark, as the caller. Null when the caller cannot see it. */
  private read(): Promise<{ chat: ChatRow; messageIds: string[] } | null> {
    return this.deps.withClient(async (client) => {
      const { rows } = await client.query<ChatRow>({
        text: `select status::text, archived, snapshot_version::text, history_version::text, generation_attempt::text,
                 queue_version::text, retry_state, pending_tool_calls
               from chat_public.chats where id = $1`,
        values: [this.chatId],
      });
      const chat = rows[0];
      if (!chat) return null;
      const messageIds: string[] = [];
      let after = this.watermark;
      for (;;) {
        // `order by m.id` is the bigint column: a bare `id` would name the text output column and sort 10 before 9.
        const page = await client.query<{ id: string }>({
          text: `select m.id::text as id from chat_public.chat_messages m
                 where m.chat_id = $1 and m.id > $2::bigint order by m.id limit $3`,
          values: [this.chatId, after, PAGE],
        });
        for (const row of page.rows) messageIds.push(row.id);
        const last = page.rows[page.rows.length - 1];
        if (!last || page.rows.length < PAGE) break;
        after = last.id;
      }
      return { chat, messageIds };
    });
  }

  async *start(): AsyncGenerator<ChatEventValue> {
    const state = await this.read();
    if (!state) throw notFound();
    this.chat = state.chat;
    this.episode = [state.chat.history_version, state.chat.generation_attempt];
    yield this.event("status", { status: state.chat.status, archived: state.chat.archived });
    yield* this.messages(state.messageIds);
    if (state.chat.status === "requires_action") {
      yield this.event("actionRequired", { status: state.chat.status, pendingToolCalls: state.chat.pending_tool_calls });
    }
  }

  /** The watermark only moves up, compared as numbers, so no message is delivered twice. */
  private *messages(ids: string[]): Generator<ChatEventValue> {
    for (const id of ids) {
      if (big(id) <= big(this.watermark)) continue;
      this.watermark = id;
      yield this.event("message", { messageId: id });
    }
  }

  async *onHint(payload: string): AsyncGenerator<ChatEventValue> {
    let hint: { snapshot_version?: unknown; change?: unknown };
    try {
      hint = JSON.parse(payload) as typeof hint;
    } catch {
      return;
    }
    const previous = this.chat!;
    const hinted = typeof hint.snapshot_version === "number" || typeof hint.snapshot_version === "string"
      ? String(hint.snapshot_version) : null;
    if (hinted !== null && big(hinted) <= big(previous.snapshot_version)) return;
    const state = await this.read();
    if (!state) throw notFound();
    const { chat } = state;
    if (big(chat.snapshot_version) <= big(previous.snapshot_version)) return;
    this.chat = chat;
    if (hint.change === "history_reset") yield this.event("historyReset");
    const episode: [string, string] = [chat.history_version, chat.generation_attempt];
    if (compareEpisode(episode, this.episode) > 0) {
      this.episode = episode;
      yield this.event("previewReset");
    }
    yield* this.messages(state.messageIds);
    if (chat.status !== previous.status || chat.archived !== previous.archived) {
      yield this.event("status", { status: chat.status, archived: chat.archived });
      if (chat.status === "requires_action") {
        yield this.event("actionRequired", { status: chat.status, pendingToolCalls: chat.pending_tool_calls });
      }
    }
    if (chat.queue_version !== previous.queue_version) yield this.event("queueUpdate", { queueChatId: this.chatId });
    if (chat.retry_state !== null && JSON.stringify(chat.retry_state) !== JSON.stringify(previous.retry_state)) {
      yield this.event("retry", { retry: chat.retry_state });
    }
  }

  *onPart(payload: string): Generator<ChatEventValue> {
    let delta: { history_version?: unknown; generation_attempt?: unknown; seq?: unknown };
    try {
      delta = JSON.parse(payload) as typeof delta;
    } catch {
      return;
    }
    const text = (value: unknown) => (typeof value === "number" || typeof value === "string") && /^\d+$/.test(String(value))
      ? String(value) : null;
    const history = text(delta.history_version);
    const attempt = text(delta.generation_attempt);
    const seq = text(delta.seq);
    if (history === null || attempt === null || seq === null) return;
    const order = compareEpisode([history, attempt], this.episode);
    if (order < 0) return;
    if (order > 0) {
      this.episode = [history, attempt];
      yield this.event("previewReset");
    }
    yield this.event("messagePart", { part: { historyVersion: history, generationAttempt: attempt, seq, data: delta } });
  }
}

/**
 * The stream as an async iterable. `return()` closes the LISTEN subscription first, which rejects the pending
 * wait, so a client that leaves releases everything at once (an async generator alone would wait for the next
 * notification before running its `finally`).
 */
export function chatEventStream(deps: StreamDeps, chatId: string, afterMessageId: string | null): AsyncIterable<ChatEventValue> {
  if (!UUID.test(chatId)) throw notFound();
  if (afterMessageId !== null && !/^\d{1,19}$/.test(afterMessageId)) {
    throw refusalError({ sqlState: "CIINV", message: "afterMessageId must be a message rowId", column: "after_message_id" })!;
  }
  const hintTopic = chatChannel(chatId.toLowerCase());
  const partTopic = partsChannel(chatId.toLowerCase());
  let subscription: Subscription | null = null;
  let closed = false;
  async function* run(): AsyncGenerator<ChatEventValue> {
    subscription = await deps.listener.subscribe([hintTopic, partTopic]);
    if (closed) return;
    const stream = new ChatStream(deps, chatId, afterMessageId);
    try {
      yield* stream.start();
      for (;;) {
        let notification: Notification;
        try {
          notification = await subscription.next();
        } catch (error) {
          if (closed) return;
          throw new SafeError("the chat stream was interrupted; resubscribe with afterMessageId", { code: "STREAM_INTERRUPTED" },
            { cause: error });
        }
        if (notification.channel === partTopic) yield* stream.onPart(notification.payload);
        else yield* stream.onHint(notification.payload);
      }
    } finally {
      await subscription.close();
    }
  }
  return {
    [Symbol.asyncIterator]() {
      const generator = run();
      return {
        next: () => generator.next(),
        async return(value?: unknown) {
          closed = true;
          await (subscription as Subscription | null)?.close();
          return generator.return(value as ChatEventValue);
        },
        throw: (error?: unknown) => generator.throw(error),
      };
    },
  };
}
