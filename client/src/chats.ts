// `client.chats.*`: the chat transitions of chatd's GraphQL API, one method per mutation, plus the reads a client
// needs around them. Content is either `prompt` (one text part) or `content` (chatd's parts).
import * as documents from "./documents.ts";
import { ChatdError, ChatdNetworkError } from "./errors.ts";
import { toChat, toInput, toMessage, toQueued, toSummary } from "./normalize.ts";
import type { Transport } from "./transport.ts";
import type { Chat, ChatInput, ChatMessage, ChatSummary, ContentPart, DynamicTool, MessageKind, QueuedMessage, ResponseFormat,
  ToolResult } from "./types.ts";

export type ContentInput = { prompt: string; content?: never } | { content: ContentPart[]; prompt?: never };

export type CreateOptions = ContentInput & {
  responseFormat?: ResponseFormat;
  workspace?: string;
  modelConfigId?: string;
  dynamicTools?: DynamicTool[];
  planMode?: boolean;
  title?: string;
  idempotencyKey?: string;
};

export type SendOptions = ContentInput & {
  responseFormat?: ResponseFormat;
  /** What a message to a busy chat does: wait in the queue (default), or interrupt the running turn. */
  busyBehavior?: "queue" | "interrupt";
  idempotencyKey?: string;
};

export type EditOptions = ContentInput & {
  /** Omitted keeps the edited message's format (under a fresh request id); `{type: "text"}` clears it. */
  responseFormat?: ResponseFormat;
};

export interface ListOptions {
  /** At most this many chats (all when omitted). */
  first?: number;
}

export interface MessagesOptions {
  afterId?: string | null;
  kind?: MessageKind;
  first?: number;
}

function contentOf(input: ContentInput): ContentPart[] {
  if (typeof input.prompt === "string") return [{ type: "text", text: input.prompt }];
  if (Array.isArray(input.content)) return input.content;
  throw new ChatdError("give `prompt` (text) or `content` (parts)", { code: "INVALID_INPUT", validations: [{ field: "content", detail: "is missing" }] });
}

const formatText = (format: ResponseFormat | undefined) =>
  format === undefined ? undefined : typeof format === "string" ? format : JSON.stringify(format);

type Raw = Record<string, unknown>;

/** Attempts of a keyed write (create, send) through a restart or failover of chatd's database: ~10 s of backoff. */
const WRITE_ATTEMPTS = 8;

/** chatd's UNAVAILABLE (its database is restarting or failing over) or no answer at all (the network). */
function isRetryable(error: unknown): boolean {
  return error instanceof ChatdNetworkError || (error instanceof ChatdError && error.code === "UNAVAILABLE");
}

export class ChatsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  private async input(query: string, field: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<ChatInput> {
    const data = await this.transport.request<Record<string, { result: Raw }>>(query, variables, signal);
    return toInput(data[field]!.result);
  }

  /** Sends a write with an idempotency key (the caller's, else a new one) and sends it again with the same key
   * while chatd or the network fails in a retryable way: the server returns the first result for a key, so a
   * retry after a lost answer never makes a second request. */
  private async keyed(query: string, field: string, input: Record<string, unknown>, key: string | undefined,
    signal?: AbortSignal): Promise<ChatInput> {
    const idempotencyKey = key ?? globalThis.crypto.randomUUID();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.input(query, field, { input: { ...input, idempotencyKey } }, signal);
      } catch (error) {
        if (attempt >= WRITE_ATTEMPTS || signal?.aborted || !isRetryable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
      }
    }
  }

  create(options: CreateOptions, signal?: AbortSignal): Promise<ChatInput> {
    return this.keyed(documents.CREATE_CHAT, "createChat", {
      content: contentOf(options), responseFormat: formatText(options.responseFormat), workspace: options.workspace,
      modelConfigId: options.modelConfigId, dynamicTools: options.dynamicTools, planMode: options.planMode,
      title: options.title,
    }, options.idempotencyKey, signal);
  }

  send(chatId: string, options: SendOptions, signal?: AbortSignal): Promise<ChatInput> {
    return this.keyed(documents.SEND_MESSAGE, "sendChatMessage", {
      chatId, content: contentOf(options), responseFormat: formatText(options.responseFormat),
      busyBehavior: options.busyBehavior?.toUpperCase(),
    }, options.idempotencyKey, signal);
  }

  edit(messageId: string, options: EditOptions, signal?: AbortSignal): Promise<ChatInput> {
    return this.input(documents.EDIT_MESSAGE, "editChatMessage", { input: {
      messageId, content: contentOf(options), responseFormat: formatText(options.responseFormat),
    } }, signal);
  }

  deleteQueued(queuedMessageId: string, signal?: AbortSignal): Promise<ChatInput> {
    return this.input(documents.DELETE_QUEUED, "deleteQueuedMessage", { id: queuedMessageId }, signal);
  }

  promoteQueued(queuedMessageId: string, signal?: AbortSignal): Promise<ChatInput> {
    return this.input(documents.PROMOTE_QUEUED, "promoteQueuedMessage", { id: queuedMessageId }, signal);
  }

  async interrupt(chatId: string, signal?: AbortSignal): Promise<Chat> {
    const data = await this.transport.request<{ interruptChat: { result: Raw } }>(documents.INTERRUPT, { id: chatId }, signal);
    return toChat(data.interruptChat.result);
  }

  /** Answers exactly the chat's pending client tool calls (see `pendingToolCalls`); the turn resumes. */
  async submitToolResults(chatId: string, results: ToolResult[], signal?: AbortSignal): Promise<Chat> {
    const payload = results.map((r) => ({ tool_call_id: r.toolCallId, result: r.result ?? null, ...(r.isError ? { is_error: true } : {}) }));
    const data = await this.transport.request<{ submitToolResults: { result: Raw } }>(documents.SUBMIT_TOOL_RESULTS,
      { id: chatId, results: payload }, signal);
    return toChat(data.submitToolResults.result);
  }

  /** The chat, or null when it does not exist or is not yours. */
  async get(chatId: string, signal?: AbortSignal): Promise<Chat | null> {
    const data = await this.transport.request<{ chatByRowId: Raw | null }>(documents.GET_CHAT, { id: chatId }, signal);
    return data.chatByRowId ? toChat(data.chatByRowId) : null;
  }

  /** Your chats, newest first. */
  async list(options: ListOptions = {}, signal?: AbortSignal): Promise<ChatSummary[]> {
    const data = await this.transport.request<{ allChats: { nodes: Raw[] } }>(documents.LIST_CHATS, { first: options.first ?? null }, signal);
    return data.allChats.nodes.map(toSummary);
  }

  /** The messages waiting in the chat's queue, in the order they will run (empty when the chat is not yours). */
  async queue(chatId: string, signal?: AbortSignal): Promise<QueuedMessage[]> {
    const data = await this.transport.request<{ chatByRowId: { queue: (Raw | null)[] | null } | null }>(documents.CHAT_QUEUE, { id: chatId }, signal);
    return (data.chatByRowId?.queue ?? []).flatMap((raw) => (raw ? [toQueued(raw)] : []));
  }

  /** The transcript in rowId order (after `afterId`, of one `kind`, at most `first`). */
  async messages(chatId: string, options: MessagesOptions = {}, signal?: AbortSignal): Promise<ChatMessage[]> {
    const variables: Record<string, unknown> = { id: chatId, after: options.afterId ?? null, first: options.first ?? null };
    if (options.kind) variables.kind = options.kind.toUpperCase();
    const data = await this.transport.request<{ chatByRowId: { messages: { nodes: Raw[] } } | null }>(
      documents.messagesQuery(options.kind !== undefined), variables, signal);
    return (data.chatByRowId?.messages.nodes ?? []).map(toMessage);
  }

  /** The rowId of the chat's newest message (a cursor for events), or null for none. */
  async lastMessageId(chatId: string, signal?: AbortSignal): Promise<string | null> {
    const data = await this.transport.request<{ chatByRowId: { chatMessagesByChatId: { nodes: { rowId: string }[] } } | null }>(
      documents.LAST_MESSAGE_ID, { id: chatId }, signal);
    if (!data.chatByRowId) throw new ChatdError("chat not found", { code: "NOT_FOUND", validations: [{ field: "chat_id", detail: "not found" }] });
    return data.chatByRowId.chatMessagesByChatId.nodes[0]?.rowId ?? null;
  }
}
