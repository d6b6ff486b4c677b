// The shapes the client returns. Ids that are PostgreSQL bigints (message and queued-message ids, versions) are
// strings, so that no id is ever rounded; enum values are chatd's own lowercase names.

export type ChatStatus = "waiting" | "running" | "interrupting" | "requires_action" | "error";
export type MessageKind = "message" | "receipt" | "control" | "summary";
export type MessageRole = "user" | "assistant" | "tool" | "system";
export type ReceiptStatus = "succeeded" | "failed" | "canceled";

/** A content part as chatd stores it: text, reasoning, tool-call, tool-result, file, source. */
export type ContentPart = { type: string; [key: string]: unknown };

/** The receipt of a structured request: the server-validated result. */
export interface StructuredOutput {
  requestId: string;
  status: ReceiptStatus;
  /** The exact stored JSON text of the value (every digit kept); null unless succeeded. */
  valueJson: string | null;
  error: { code: string; message: string } | null;
}

export interface ChatMessage {
  /** The stream cursor (a bigint, as text). */
  rowId: string;
  chatId: string;
  role: MessageRole;
  kind: MessageKind;
  visibility: string;
  content: ContentPart[];
  structuredOutputRequestId: string | null;
  /** Only on receipts. */
  structuredOutput: StructuredOutput | null;
  usage: Record<string, unknown> | null;
  createdAt: string;
}

/** What an input (create, send, edit, delete or promote a queued message) did. */
export interface ChatInput {
  chatId: string;
  /** The message that started a turn, when the input started one. */
  messageId: string | null;
  /** The queued message, when the chat was busy. */
  queuedMessageId: string | null;
  structuredOutputRequestId: string | null;
  /** Receipts the input committed (an edit's supersessions, a queue deletion). */
  receiptMessageIds: string[];
}

/** A chat as `chats.list()` shows it. */
export interface ChatSummary {
  chatId: string;
  title: string | null;
  status: ChatStatus;
  archived: boolean;
  workspace: string | null;
  createdAt: string;
  updatedAt: string;
  /** Structured requests of the chat that have no receipt yet. */
  pendingStructuredRequests: number;
}

/** A message waiting in a busy chat's queue (`chats.queue()`), in the order it will run. */
export interface QueuedMessage {
  queuedMessageId: string;
  chatId: string;
  content: ContentPart[];
  structuredOutputRequestId: string | null;
  createdAt: string;
}

export interface PendingToolCall {
  tool_call_id: string;
  tool_name: string;
}

export interface Chat {
  chatId: string;
  status: ChatStatus;
  archived: boolean;
  modelConfigId: string;
  pendingToolCalls: PendingToolCall[];
  lastError: unknown;
  snapshotVersion: string;
}

export type ChatEventType = "message" | "messagePart" | "status" | "queueUpdate" | "actionRequired" | "retry"
  | "previewReset" | "historyReset";

export interface ChatEvent {
  type: ChatEventType;
  chatId: string;
  snapshotVersion: string;
  historyVersion: string;
  generationAttempt: string;
  /** On message events. */
  message: ChatMessage | null;
  /** On status and actionRequired events. */
  status: ChatStatus | null;
  archived: boolean | null;
  /** On actionRequired events. */
  pendingToolCalls: PendingToolCall[] | null;
  /** On retry events: {attempt, max_attempts, delay_ms, retrying_at, error}. */
  retry: Record<string, unknown> | null;
  /** On messagePart events: a streamed delta of the step being generated (a preview, never a result). */
  part: { historyVersion: string; generationAttempt: string; seq: string; data: Record<string, unknown> } | null;
  /** True on the previewReset the client adds after it reconnected (deltas sent meanwhile are lost). */
  reconnected?: boolean;
}

/** `{type: "text"}`, a json_schema envelope, or the envelope's JSON text as is. */
export type ResponseFormat = string | { type: "text" }
  | { type: "json_schema"; json_schema: { name: string; description?: string; schema: Record<string, unknown> } };

/** A dynamic (client-executed) tool: the chat pauses in requires_action until its results are submitted. */
export interface DynamicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  plan_safe?: boolean;
}

export interface ToolResult {
  toolCallId: string;
  /** Any JSON value. */
  result: unknown;
  isError?: boolean;
}

export type BatchStatus = "validating" | "running" | "completed" | "failed" | "canceled";
export type BatchItemStatus = "pending" | "running" | "succeeded" | "failed" | "canceled";

export interface Batch {
  batchId: string;
  name: string | null;
  status: BatchStatus;
  totalItems: number;
  concurrency: number;
  workspace: string | null;
  modelConfigId: string;
  /** The batch's own failure (a failed batch), not its items'. */
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
  /** Items by status, counted when read. */
  itemCounts: Record<BatchItemStatus, number>;
}

/** One line of a batch and its outcome. */
export interface BatchItemResult {
  line: number;
  status: BatchItemStatus;
  chatId: string | null;
  structuredOutputRequestId: string | null;
  /** The receipt's exact JSON text (every digit kept); null unless the item succeeded. */
  valueJson: string | null;
  /** The request's failure or cancellation code, or invalid_line, invalid_input, dispatch_failed, batch_failed, batch_canceled. */
  errorCode: string | null;
  errorMessage: string | null;
}
