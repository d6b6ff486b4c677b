// A chat's transcript as UI messages (GET /api/chat/:id/messages): each user input, then its turn as one
// assistant message built from the same chunks a live stream sends (TurnWriter), folded by the AI SDK's own
// readUIMessageStream, so a loaded message and a streamed one are the same object.
import { readUIMessageStream, type UIMessage } from "ai";
import type { Executor } from "./graphql.ts";
import { inputText, isInput, ROW_FIELDS, turnMessageId, type Chunk, type Row } from "./parts.ts";
import { TurnWriter } from "./turn-stream.ts";

const PAGE = 500;
const ROWS = `query($id: UUID!, $after: BigInt, $first: Int) { chatByRowId(rowId: $id) { rowId status pendingToolCalls lastError
  messages(afterId: $after, first: $first) { nodes { ${ROW_FIELDS} } } } }`;

export interface ChatSnapshot {
  chatId: string;
  status: string;
  pendingToolCalls: unknown;
  lastError: unknown;
  rows: Row[];
}

/** Every row the caller may see, in rowId order; null when the chat is not the caller's. */
export async function readChat(executor: Executor, chatId: string): Promise<ChatSnapshot | null> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  let head: Omit<ChatSnapshot, "rows"> | null = null;
  for (;;) {
    type Page = { chatByRowId: { rowId: string; status: string; pendingToolCalls: unknown; lastError: unknown; messages: { nodes: Row[] } } | null };
    const { chatByRowId: chat }: Page = await executor.run<Page>(ROWS, { id: chatId, after: cursor, first: PAGE });
    if (!chat) return null;
    head ??= { chatId: chat.rowId, status: chat.status.toLowerCase(), pendingToolCalls: chat.pendingToolCalls, lastError: chat.lastError };
    rows.push(...chat.messages.nodes);
    const last = chat.messages.nodes.at(-1);
    if (!last || chat.messages.nodes.length < PAGE) break;
    cursor = last.rowId;
  }
  return { ...head!, rows };
}

/** The latest input row (the running turn's, while a turn runs). */
export function latestInput(rows: Row[]): Row | null {
  for (let i = rows.length - 1; i >= 0; i--) if (isInput(rows[i]!) && !rows[i]!.deleted) return rows[i]!;
  return null;
}

type ToolPart = { type: string; toolCallId?: string; input?: unknown; output?: unknown; errorText?: string };

/**
 * The AI SDK's own fold of a turn's chunks into its message. readUIMessageStream snapshots the message after every
 * chunk with structuredClone, which copies every tool input and output so far each time: a turn of many large
 * tool results cost its size times its chunk count. The fold is given the chunks with those values held aside
 * (text is already exempt), and the values are put back once: the cost is linear in the turn's size.
 */
async function fold(chunks: Chunk[]): Promise<UIMessage | null> {
  const held = new Map<string, { input?: unknown; output?: unknown; errorText?: string }>();
  const hold = (id: string) => held.get(id) ?? held.set(id, {}).get(id)!;
  const light = chunks.map((chunk): Chunk => {
    if (chunk.type === "tool-input-available") {
      hold(chunk.toolCallId).input = chunk.input;
      return { ...chunk, input: null };
    }
    if (chunk.type === "tool-output-available") {
      hold(chunk.toolCallId).output = chunk.output;
      return { ...chunk, output: null };
    }
    if (chunk.type === "tool-output-error") {
      hold(chunk.toolCallId).errorText = chunk.errorText;
      return { ...chunk, errorText: "" };
    }
    return chunk;
  });
  const stream = new ReadableStream<Chunk>({
    start(controller) {
      for (const chunk of light) controller.enqueue(chunk);
      controller.close();
    },
  });
  let message: UIMessage | null = null;
  for await (const state of readUIMessageStream({ stream, terminateOnError: true })) message = state;
  for (const part of (message?.parts ?? []) as ToolPart[]) {
    const values = part.toolCallId === undefined ? undefined : held.get(part.toolCallId);
    if (!values) continue;
    if ("input" in values && "input" in part) part.input = values.input;
    if ("output" in values && "output" in part) part.output = values.output;
    if (values.errorText !== undefined && "errorText" in part) part.errorText = values.errorText;
  }
  return message;
}

export async function uiMessages(chatId: string, rows: Row[]): Promise<UIMessage[]> {
  const messages: UIMessage[] = [];
  let turn: { input: Row; chunks: Chunk[]; writer: TurnWriter } | null = null;
  const flush = async () => {
    if (!turn) return;
    turn.writer.close();
    const message = await fold([{ type: "start", messageId: turnMessageId(turn.input.rowId),
      messageMetadata: { chatId, inputMessageId: turn.input.rowId } }, ...turn.chunks, { type: "finish" }]);
    if (message && message.parts.length > 0) messages.push(message);
    turn = null;
  };
  for (const row of rows) {
    if (isInput(row)) {
      if (row.deleted) continue;
      await flush();
      messages.push({ id: row.rowId, role: "user", parts: [{ type: "text", text: inputText(row) }],
        metadata: { chatId, structuredOutputRequestId: row.structuredOutputRequestId } });
      const chunks: Chunk[] = [];
      turn = { input: row, chunks, writer: new TurnWriter({ write: (chunk: Chunk) => void chunks.push(chunk) }, row.rowId, []) };
    } else {
      turn?.writer.row(row);
    }
  }
  await flush();
  return messages;
}
