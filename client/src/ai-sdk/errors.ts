// AI SDK errors for what chatd reports: a structured request that failed or was canceled (its receipt), and a
// turn that ended in error. Both are AISDKErrors (AISDKError.isInstance is true) carrying chatd's own code.
import { AISDKError } from "@ai-sdk/provider";

const RECEIPT = "AI_ChatdReceiptError";
const TURN = "AI_ChatdTurnError";

/** The structured request's receipt is failed or canceled; `code` is the receipt's (not_produced, interrupted, ...). */
export class ChatdReceiptError extends AISDKError {
  readonly code: string;
  readonly status: "failed" | "canceled";
  readonly requestId: string;
  readonly chatId: string;

  constructor(options: { code: string; message: string; status: "failed" | "canceled"; requestId: string; chatId: string }) {
    super({ name: RECEIPT, message: `chatd structured output ${options.status} (${options.code}): ${options.message}` });
    this.code = options.code;
    this.status = options.status;
    this.requestId = options.requestId;
    this.chatId = options.chatId;
  }

  static override isInstance(error: unknown): error is ChatdReceiptError {
    return AISDKError.hasMarker(error, RECEIPT) || (error instanceof Error && error.name === RECEIPT);
  }
}

/** The chat's turn ended in error status (chatd's `lastError`: provider failure, configuration, ...). */
export class ChatdTurnError extends AISDKError {
  readonly code: string;
  readonly chatId: string;
  readonly lastError: unknown;

  constructor(options: { chatId: string; lastError: unknown }) {
    const last = (options.lastError ?? {}) as { kind?: unknown; code?: unknown; message?: unknown };
    const code = String(last.code ?? last.kind ?? "turn_failed");
    super({ name: TURN, message: `chatd turn failed (${code})${typeof last.message === "string" ? `: ${last.message}` : ""}` });
    this.code = code;
    this.chatId = options.chatId;
    this.lastError = options.lastError;
  }

  static override isInstance(error: unknown): error is ChatdTurnError {
    return AISDKError.hasMarker(error, TURN) || (error instanceof Error && error.name === TURN);
  }
}
