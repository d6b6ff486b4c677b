// chatd's transcript rows as AI SDK UI message chunks. A turn (one user input and every row after it up to the
// next input) is one assistant UI message whose id is `turn-<input rowId>`, so a replay of the turn (resume)
// replaces the message a client already has instead of adding to it. Tool calls are dynamic tools; a receipt is a
// `data-receipt` part keyed by its request id, never text; the finalizer's own call and result are not shown,
// since the receipt is the only result (its text rounds big numbers once parsed as JSON).
import type { UIMessageChunk } from "ai";
import { FINALIZER_TOOL_NAME } from "../../structured/finalizer.ts";

export interface Row {
  rowId: string;
  /** The chat's snapshot_version when the row was written. */
  revision: string | null;
  role: "USER" | "ASSISTANT" | "TOOL" | "SYSTEM";
  kind: "MESSAGE" | "RECEIPT" | "CONTROL" | "SUMMARY";
  deleted: boolean;
  content: unknown;
  structuredOutputRequestId: string | null;
  structuredOutput: {
    requestId: string;
    status: "SUCCEEDED" | "FAILED" | "CANCELED" | "PENDING";
    valueJson: string | null;
    error: { code: string; message: string } | null;
  } | null;
  structuredOutputRequestByReceiptMessageId: { name: string } | null;
}

/** The GraphQL selection every reader of rows uses (history and streams alike). */
export const ROW_FIELDS = `rowId revision role kind deleted content structuredOutputRequestId
  structuredOutput { requestId status valueJson error { code message } }
  structuredOutputRequestByReceiptMessageId { name }`;

/** What a `data-receipt` part carries: `valueJson` is the stored JSON text, every digit kept. */
export interface ReceiptData {
  requestId: string;
  status: "succeeded" | "failed" | "canceled";
  valueJson: string | null;
  error: { code: string; message: string } | null;
  schemaName: string | null;
  messageId: string;
}

export type Chunk = UIMessageChunk;

export const turnMessageId = (inputRowId: string): string => `turn-${inputRowId}`;
export const isInput = (row: Row): boolean => row.role === "USER" && row.kind === "MESSAGE";
/** Message ids are bigints: compared as numbers, never as text ("10" < "9" as text). */
export const after = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

type Part = Record<string, unknown> & { type?: unknown };
const parts = (row: Row): Part[] => (Array.isArray(row.content) ? row.content as Part[] : []);
const str = (value: unknown): string => (typeof value === "string" ? value : "");

export function receiptData(row: Row): ReceiptData | null {
  const output = row.structuredOutput;
  if (row.kind !== "RECEIPT" || !output || output.status === "PENDING") return null;
  return {
    requestId: output.requestId,
    status: output.status.toLowerCase() as ReceiptData["status"],
    valueJson: output.valueJson,
    error: output.error,
    schemaName: row.structuredOutputRequestByReceiptMessageId?.name ?? null,
    messageId: row.rowId,
  };
}

/** The text of a user row (its text parts joined). */
export function inputText(row: Row): string {
  return parts(row).filter((part) => part.type === "text").map((part) => str(part.text)).join("");
}

/** A whole text or reasoning part as start, delta, end. */
export function wholeText(kind: "text" | "reasoning", id: string, text: string): Chunk[] {
  return [{ type: `${kind}-start`, id }, ...(text === "" ? [] : [{ type: `${kind}-delta` as const, id, delta: text }]),
    { type: `${kind}-end`, id }] as Chunk[];
}

function resultChunk(part: Part): Chunk {
  const toolCallId = str(part.tool_call_id);
  const providerExecuted = part.provider_executed === true ? { providerExecuted: true } : {};
  if (part.is_error === true) {
    const errorText = typeof part.result === "string" ? part.result : JSON.stringify(part.result ?? null);
    return { type: "tool-output-error", toolCallId, errorText, dynamic: true, ...providerExecuted };
  }
  return { type: "tool-output-available", toolCallId, output: part.result ?? null, dynamic: true, ...providerExecuted };
}

export interface RowEmitOptions {
  /** Tool calls the receiver knows (emitted earlier or already in its message); outputs of others are skipped. */
  knownCalls: Set<string>;
  /** Parts already opened by the live preview, by content index: only their remainder is sent, then their end. */
  previewed?: Map<number, { id: string; kind: "text" | "reasoning"; text: string }>;
}

/**
 * The chunks of one committed row (no step markers). Assistant rows: reasoning, text and tool calls; tool rows:
 * outputs; receipts: a data-receipt part; user-visible notices (hook messages, compaction markers): data-notice.
 */
export function rowChunks(row: Row, options: RowEmitOptions): Chunk[] {
  if (row.kind === "RECEIPT") {
    const data = receiptData(row);
    return data ? [{ type: "data-receipt", id: data.requestId, data }] : [];
  }
  if (row.kind === "CONTROL" || row.kind === "SUMMARY") {
    const text = parts(row).map((part) => str(part.text)).join("");
    return text === "" ? [] : [{ type: "data-notice", id: `notice-${row.rowId}`, data: { kind: row.kind.toLowerCase(), text } }];
  }
  const out: Chunk[] = [];
  parts(row).forEach((part, index) => {
    const id = `${row.rowId}-${index}`;
    if (part.type === "text" || part.type === "reasoning") {
      const kind = part.type;
      const text = str(part.text);
      const open = options.previewed?.get(index);
      if (open && open.kind === kind && text.startsWith(open.text)) {
        const rest = text.slice(open.text.length);
        if (rest !== "") out.push({ type: `${kind}-delta`, id: open.id, delta: rest } as Chunk);
        out.push({ type: `${kind}-end`, id: open.id } as Chunk);
      } else {
        out.push(...wholeText(kind, id, text));
      }
    } else if (part.type === "tool-call" && part.tool_name !== FINALIZER_TOOL_NAME) {
      const toolCallId = str(part.tool_call_id);
      options.knownCalls.add(toolCallId);
      out.push({ type: "tool-input-available", toolCallId, toolName: str(part.tool_name), input: part.args ?? {}, dynamic: true,
        ...(part.provider_executed === true ? { providerExecuted: true } : {}) });
    } else if (part.type === "tool-result" && options.knownCalls.has(str(part.tool_call_id))) {
      out.push(resultChunk(part));
    }
  });
  return out;
}
