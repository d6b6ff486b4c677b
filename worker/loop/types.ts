// The data the loop's modules hand each other: the fence, the turn state read from the database, and the rows a
// step commits. Types only, imported by every module and importing none of them, so no two modules of the loop need
// each other for a type.
import type { ChatPrompt } from "../../src/providers/index.ts";
import type { DynamicToolDeclaration } from "../../src/tools/index.ts";

/** What every fenced transition carries (transitions.ts); it moves forward with each commit. */
export interface Fence {
  chatId: string;
  runnerId: string;
  historyVersion: string;
  generationAttempt: string;
}

/** The fence columns a transition returns. */
export interface FenceRow {
  runner_id: string;
  history_version: string;
  generation_attempt: string;
}

/** A history row the worker commits (commit_step's messages). */
export interface StoredMessage {
  role: "assistant" | "tool";
  content: unknown[];
  visibility?: "user" | "model" | "both";
  usage?: unknown;
  internals?: { provider_metadata?: unknown; finish?: unknown };
}

export interface PendingCall {
  tool_call_id: string;
  tool_name: string;
  args: string;
}

/** A provider step as the stored assistant row (assistant.ts). */
export interface BuiltStep {
  message: StoredMessage;
  /** Calls to answer (locally or by the client), in stream order. */
  calls: PendingCall[];
  /** True when the content holds nothing (an error before any output). */
  empty: boolean;
}

/** The pending structured request of the open turn, as loadTurnState reads it. */
export interface StructuredState {
  requestId: string;
  /** `schema::text` of the stored jsonb: re-validated before every use (structured.ts). */
  schemaText: string;
  rejectedBatches: number;
  valueRejected: boolean;
  candidatePresent: boolean;
}

/** The receipt of a structured request that fails for its own reasons (finish_turn's outcome). */
export interface FailedOutcome {
  status: "failed";
  code: "not_produced" | "validation_exhausted" | "refused" | "configuration_error";
  message?: string;
}

/** Whether the history is due for compaction (compaction.ts). */
export interface CompactionCheck {
  due: boolean;
  source: "manual" | "automatic";
  contextTokens: number | null;
  contextLimit: number;
  thresholdPercent: number;
  /** The newest live row the summary will cover. */
  upToMessageId: string | null;
}

export interface ChatInfo {
  id: string;
  status: string;
  modelConfigId: string;
  workspace: string | null;
  dynamicTools: DynamicToolDeclaration[];
  planMode: boolean;
  parentChatId: string | null;
  mcpServerIds: string[];
}

/** What the next step needs, read in one snapshot (history.ts). */
export interface TurnState {
  chat: ChatInfo;
  prompt: ChatPrompt;
  /** Calls of this turn's last assistant step without a result yet. */
  pending: PendingCall[];
  /** The turn's last model-visible row is a final assistant answer (finish_turn was not reached). */
  answered: boolean;
  steps: number;
  /** The structured request this turn governs, while it is pending. */
  structured: StructuredState | null;
  /** Whether the history is due for compaction, read in the same snapshot. */
  compaction: CompactionCheck;
  /** The worker's config version in this snapshot (config.ts). */
  configVersion: bigint;
}

/** interrupt: the client asked to stop (write the partial output); the others: write nothing. */
export type StopReason = "interrupt" | "lost" | "shutdown";
/** promoted: the turn ended and the queue head started a new one (status stays running). */
export type RunOutcome = "finished" | "promoted" | "paused" | "failed" | "lost" | "released";
