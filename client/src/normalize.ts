// From the GraphQL shapes (uppercase enums) to the client's (chatd's lowercase names).
import type { Chat, ChatEvent, ChatInput, ChatMessage, ChatStatus, PendingToolCall } from "./types.ts";

type Raw = Record<string, unknown>;

const lower = <T extends string>(value: unknown): T => (typeof value === "string" ? value.toLowerCase() : value) as T;

export function toMessage(raw: Raw): ChatMessage {
  const output = raw.structuredOutput as Raw | null;
  return {
    rowId: raw.rowId as string,
    chatId: raw.chatId as string,
    role: lower(raw.role),
    kind: lower(raw.kind),
    visibility: lower(raw.visibility),
    content: (raw.content ?? []) as ChatMessage["content"],
    structuredOutputRequestId: (raw.structuredOutputRequestId ?? null) as string | null,
    structuredOutput: output ? {
      requestId: output.requestId as string,
      status: lower(output.status),
      valueJson: (output.valueJson ?? null) as string | null,
      error: (output.error ?? null) as { code: string; message: string } | null,
    } : null,
    usage: (raw.usage ?? null) as Record<string, unknown> | null,
    createdAt: raw.createdAt as string,
  };
}

export function toInput(raw: Raw): ChatInput {
  return {
    chatId: raw.chatId as string,
    messageId: (raw.messageId ?? null) as string | null,
    queuedMessageId: (raw.queuedMessageId ?? null) as string | null,
    structuredOutputRequestId: (raw.structuredOutputRequestId ?? null) as string | null,
    receiptMessageIds: (raw.receiptMessageIds ?? []) as string[],
  };
}

export function toChat(raw: Raw): Chat {
  return {
    chatId: raw.rowId as string,
    status: lower<ChatStatus>(raw.status),
    archived: raw.archived as boolean,
    modelConfigId: raw.modelConfigId as string,
    pendingToolCalls: (raw.pendingToolCalls ?? []) as PendingToolCall[],
    lastError: raw.lastError ?? null,
    snapshotVersion: raw.snapshotVersion as string,
  };
}

export function toEvent(raw: Raw): ChatEvent {
  const message = raw.message as Raw | null;
  return {
    type: raw.type as ChatEvent["type"],
    chatId: raw.chatId as string,
    snapshotVersion: raw.snapshotVersion as string,
    historyVersion: raw.historyVersion as string,
    generationAttempt: raw.generationAttempt as string,
    message: message ? toMessage(message) : null,
    status: raw.status == null ? null : lower<ChatStatus>(raw.status),
    archived: (raw.archived ?? null) as boolean | null,
    pendingToolCalls: (raw.pendingToolCalls ?? null) as PendingToolCall[] | null,
    retry: (raw.retry ?? null) as Record<string, unknown> | null,
    part: (raw.part ?? null) as ChatEvent["part"],
  };
}
