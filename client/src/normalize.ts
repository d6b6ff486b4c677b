// From the GraphQL shapes (uppercase enums) to the client's (chatd's lowercase names).
import type { Batch, BatchItemResult, BatchItemStatus, BatchStatus, Chat, ChatEvent, ChatInput, ChatMessage, ChatStatus, ChatSummary,
  PendingToolCall, QueuedMessage } from "./types.ts";

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

export function toSummary(raw: Raw): ChatSummary {
  return {
    chatId: raw.rowId as string,
    title: (raw.title ?? null) as string | null,
    status: lower<ChatStatus>(raw.status),
    archived: raw.archived as boolean,
    workspace: (raw.workspace ?? null) as string | null,
    createdAt: raw.createdAt as string,
    updatedAt: raw.updatedAt as string,
    pendingStructuredRequests: raw.pendingStructuredRequests as number,
  };
}

export function toQueued(raw: Raw): QueuedMessage {
  return {
    queuedMessageId: raw.rowId as string,
    chatId: raw.chatId as string,
    content: (raw.content ?? []) as QueuedMessage["content"],
    structuredOutputRequestId: (raw.structuredOutputRequestId ?? null) as string | null,
    createdAt: raw.createdAt as string,
  };
}

export function toBatch(raw: Raw): Batch {
  const counts = (raw.itemCounts ?? {}) as Partial<Record<BatchItemStatus, number | null>>;
  return {
    batchId: raw.rowId as string,
    name: (raw.name ?? null) as string | null,
    status: lower<BatchStatus>(raw.status),
    totalItems: raw.totalItems as number,
    concurrency: raw.concurrency as number,
    workspace: (raw.workspace ?? null) as string | null,
    modelConfigId: raw.modelConfigId as string,
    error: (raw.error ?? null) as string | null,
    createdAt: raw.createdAt as string,
    finishedAt: (raw.finishedAt ?? null) as string | null,
    itemCounts: { pending: counts.pending ?? 0, running: counts.running ?? 0, succeeded: counts.succeeded ?? 0,
      failed: counts.failed ?? 0, canceled: counts.canceled ?? 0 },
  };
}

export function toBatchItem(raw: Raw): BatchItemResult {
  const request = raw.structuredOutputRequestByStructuredOutputRequestId as
    { chatMessageByReceiptMessageId: { structuredOutput: { valueJson: string | null } | null } | null } | null;
  return {
    line: raw.line as number,
    status: lower<BatchItemStatus>(raw.status),
    chatId: (raw.chatId ?? null) as string | null,
    structuredOutputRequestId: (raw.structuredOutputRequestId ?? null) as string | null,
    valueJson: request?.chatMessageByReceiptMessageId?.structuredOutput?.valueJson ?? null,
    errorCode: (raw.errorCode ?? null) as string | null,
    errorMessage: (raw.errorMessage ?? null) as string | null,
  };
}
