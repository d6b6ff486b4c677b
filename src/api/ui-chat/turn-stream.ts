// One turn as a UI message stream, driven by chatd's durable cursor. The `chatEvents` subscription delivers the
// committed rows after the cursor and then every change; rows are emitted once each (rowIds compared as
// numbers), part deltas are previewed only for a step seen from its first delta (seq 1, contiguous), and a
// committed step closes its preview with whatever the preview missed. When the preview cannot be trusted (a gap,
// a new generation attempt, text that differs from what was committed) the step's parts are dropped with
// `reset-step` and sent again from the committed row, so a client never keeps a part twice or loses one.
//
// The stream ends when the turn stops running (waiting, error, requires_action) after every row committed before
// that status was sent, or when the next input row starts another turn (a queued follow-up), or on historyReset
// (an edit discarded the transcript: the client reloads it).
import { FINALIZER_TOOL_NAME } from "../../structured/finalizer.ts";
import { GraphQLRefusal, type Executor } from "./graphql.ts";
import { after, isInput, ROW_FIELDS, rowChunks, turnMessageId, type Chunk, type Row } from "./parts.ts";

const EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type status pendingToolCalls message { ${ROW_FIELDS} } part { historyVersion generationAttempt seq data } } }`;
const COMMITTED = `query($id: UUID!, $after: BigInt, $first: Int) { chatByRowId(rowId: $id) { status lastError pendingToolCalls
  messages(afterId: $after, first: $first) { nodes { ${ROW_FIELDS} } } } }`;
/** Rows per read of committed rows: what a replay holds at once, whatever the turn's length. */
const COMMITTED_BATCH = 16;

type Status = "RUNNING" | "INTERRUPTING" | "REQUIRES_ACTION" | "WAITING" | "ERROR";

interface ChatEvent {
  type: string;
  status: Status | null;
  pendingToolCalls: unknown;
  message: Row | null;
  part: { historyVersion: string; generationAttempt: string; seq: string; data: Delta } | null;
}

interface Delta {
  part_index?: number;
  kind?: "text" | "reasoning" | "tool-input";
  delta?: string;
  tool_call_id?: string;
  tool_name?: string;
}

interface Preview {
  episode: string;
  /** False once a delta was missed: the step waits for its commit. */
  trusted: boolean;
  seq: bigint;
  open: Map<number, { id: string; kind: "text" | "reasoning"; text: string }>;
  toolCalls: Set<string>;
  hidden: Set<string>;
}

/** Where a stream's chunks go: `drained` resolves once the client has read them (false: it is gone or dropped). */
export interface ChunkSink {
  write(chunk: Chunk): void;
  drained(): Promise<boolean>;
}

export interface TurnStreamOptions {
  executor: Executor;
  chatId: string;
  /** The turn's input row: the UI message is `turn-<inputRowId>`. */
  inputRowId: string;
  /** Rows up to this id are not sent (the input row for a new turn or a replay; later for a continuation). */
  cursor: string;
  /** Tool calls the client already has in its message (a continuation after tool results). */
  knownCalls?: Iterable<string>;
  signal: AbortSignal;
}

const TERMINAL = new Set<Status>(["WAITING", "ERROR", "REQUIRES_ACTION"]);

/** Turns rows and deltas into chunks; also used without a stream to build a chat's history (history.ts). */
export class TurnWriter {
  private readonly writer: Pick<ChunkSink, "write">;
  private watermark: string;
  private preview: Preview | null = null;
  /** Deltas of episodes whose history_version is below this were committed already (the commit's revision is
   * the next step's history_version; a step's last deltas are notified after its row). */
  private floor = 0n;
  /** A step-start was written and its finish-step not yet. */
  private stepOpen = false;
  readonly knownCalls: Set<string>;
  ended = false;

  constructor(writer: Pick<ChunkSink, "write">, cursor: string, knownCalls: Iterable<string>) {
    this.writer = writer;
    this.watermark = cursor;
    this.knownCalls = new Set(knownCalls);
  }

  private write(chunks: Chunk[]): void {
    for (const chunk of chunks) this.writer.write(chunk);
  }

  private openStep(): void {
    if (!this.stepOpen) this.write([{ type: "start-step" }]);
    this.stepOpen = true;
  }

  /** Drops what the preview showed of the current step. */
  private dropPreview(): void {
    const preview = this.preview;
    if (preview?.trusted && (preview.open.size > 0 || preview.toolCalls.size > 0)) this.write([{ type: "reset-step" }]);
    if (preview) {
      preview.trusted = false;
      preview.open.clear();
      preview.toolCalls.clear();
    }
  }

  /** A committed row; returns false when it belongs to the next turn (the stream ends before it). */
  row(row: Row): boolean {
    if (!after(row.rowId, this.watermark)) return true;
    if (isInput(row)) {
      this.ended = true;
      return false;
    }
    this.watermark = row.rowId;
    // Receipts move the snapshot but not the history (the running step's episode stays).
    if (row.kind !== "RECEIPT" && row.revision !== null && BigInt(row.revision) > this.floor) this.floor = BigInt(row.revision);
    if (row.deleted && row.kind !== "RECEIPT") return true;
    if (row.role !== "ASSISTANT" || row.kind !== "MESSAGE") {
      this.write(rowChunks(row, { knownCalls: this.knownCalls }));
      return true;
    }
    const preview = this.preview;
    let previewed: Preview["open"] | undefined;
    if (preview?.trusted && this.consistent(preview, row)) previewed = preview.open;
    else this.dropPreview();
    this.openStep();
    this.write(rowChunks(row, { knownCalls: this.knownCalls, previewed }));
    this.write([{ type: "finish-step" }]);
    this.stepOpen = false;
    // Deltas of the committed episode that arrive late are ignored (the episode stays, untrusted and empty).
    if (preview) {
      preview.trusted = false;
      preview.open.clear();
      preview.toolCalls.clear();
    }
    return true;
  }

  private consistent(preview: Preview, row: Row): boolean {
    const content = Array.isArray(row.content) ? row.content as { type?: unknown; text?: unknown; tool_call_id?: unknown }[] : [];
    for (const [index, open] of preview.open) {
      const part = content[index];
      if (!part || part.type !== open.kind || typeof part.text !== "string" || !part.text.startsWith(open.text)) return false;
    }
    const calls = new Set(content.filter((part) => part.type === "tool-call").map((part) => part.tool_call_id));
    for (const id of preview.toolCalls) if (!calls.has(id)) return false;
    return true;
  }

  delta(part: NonNullable<ChatEvent["part"]>): void {
    if (BigInt(part.historyVersion) < this.floor) return;
    const episode = `${part.historyVersion}.${part.generationAttempt}`;
    const seq = BigInt(part.seq);
    if (this.preview?.episode !== episode) {
      this.dropPreview();
      // A step joined after its first delta is shown when it commits, never from the middle.
      this.preview = { episode, trusted: seq === 1n, seq, open: new Map(), toolCalls: new Set(), hidden: new Set() };
      if (!this.preview.trusted) return;
    } else {
      if (!this.preview.trusted) return;
      if (seq !== this.preview.seq + 1n) {
        this.dropPreview();
        return;
      }
      this.preview.seq = seq;
    }
    this.previewDelta(this.preview, part.data, episode);
  }

  private previewDelta(preview: Preview, data: Delta, episode: string): void {
    const index = data.part_index ?? -1;
    const delta = data.delta ?? "";
    if (data.kind === "text" || data.kind === "reasoning") {
      let open = preview.open.get(index);
      if (!open) {
        this.openStep();
        open = { id: `p${episode}-${index}`, kind: data.kind, text: "" };
        preview.open.set(index, open);
        this.write([{ type: `${data.kind}-start`, id: open.id } as Chunk]);
      }
      open.text += delta;
      if (delta !== "") this.write([{ type: `${open.kind}-delta`, id: open.id, delta } as Chunk]);
    } else if (data.kind === "tool-input" && data.tool_call_id) {
      const toolCallId = data.tool_call_id;
      if (data.tool_name === FINALIZER_TOOL_NAME) preview.hidden.add(toolCallId);
      if (preview.hidden.has(toolCallId)) return;
      if (!preview.toolCalls.has(toolCallId)) {
        if (!data.tool_name) return;
        this.openStep();
        preview.toolCalls.add(toolCallId);
        this.write([{ type: "tool-input-start", toolCallId, toolName: data.tool_name, dynamic: true }]);
      }
      if (delta !== "") this.write([{ type: "tool-input-delta", toolCallId, inputTextDelta: delta }]);
    }
  }

  resetPreview(): void {
    this.dropPreview();
  }

  close(): void {
    this.dropPreview();
    if (this.stepOpen) this.write([{ type: "finish-step" }]);
    this.stepOpen = false;
  }

  get cursor(): string {
    return this.watermark;
  }
}

function chatData(chatId: string, status: string, pendingToolCalls: unknown): Chunk {
  return { type: "data-chat", data: { chatId, status: status.toLowerCase(), pendingToolCalls: pendingToolCalls ?? [] }, transient: true };
}

interface ChatState {
  status: Status;
  lastError: { message?: string } | null;
  pendingToolCalls: unknown;
}

/**
 * Sends the rows committed after the turn's cursor, read a batch at a time, each row once the client has taken the
 * one before (back-pressure): a replay of a long turn holds one batch, never the turn. Returns the chat's state as
 * of the first read (null when the caller cannot see the chat) and whether the stream should end (the next turn
 * started, or the client is gone).
 */
async function sendCommitted(executor: Executor, chatId: string, turn: TurnWriter, writer: ChunkSink): Promise<{ chat: ChatState | null; ended: boolean }> {
  let chat: ChatState | null = null;
  for (;;) {
    const { chatByRowId: page } = await executor.run<{ chatByRowId: (ChatState & { messages: { nodes: Row[] } }) | null }>(
      COMMITTED, { id: chatId, after: turn.cursor, first: COMMITTED_BATCH });
    if (!page) return { chat, ended: true };
    chat ??= { status: page.status, lastError: page.lastError, pendingToolCalls: page.pendingToolCalls };
    for (const row of page.messages.nodes) {
      if (!turn.row(row) || !await writer.drained()) return { chat, ended: true };
    }
    if (page.messages.nodes.length < COMMITTED_BATCH) return { chat, ended: false };
  }
}

/** Writes the turn to `writer` and resolves when the stream should end (see the top of the file). */
export async function streamTurn(writer: ChunkSink, options: TurnStreamOptions): Promise<void> {
  const { executor, chatId } = options;
  writer.write({ type: "start", messageId: turnMessageId(options.inputRowId),
    messageMetadata: { chatId, inputMessageId: options.inputRowId } });
  const turn = new TurnWriter(writer, options.cursor, options.knownCalls ?? []);
  // What is committed already is read in batches here; the subscription then starts after it, so it delivers
  // only what comes next (its own catch-up reads each row by itself).
  const committed = await sendCommitted(executor, chatId, turn, writer);
  if (!committed.chat) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
  let finalStatus: Status | null = null;
  if (!committed.ended && !options.signal.aborted) {
    const events = await executor.subscribe<{ chatEvents: ChatEvent }>(EVENTS, { chatId, after: turn.cursor });
    const stop = () => void events.return?.();
    options.signal.addEventListener("abort", stop, { once: true });
    try {
      for await (const { chatEvents: event } of events) {
        if (event.type === "message" && event.message) {
          if (!turn.row(event.message)) break;
        } else if (event.type === "messagePart" && event.part) {
          turn.delta(event.part);
        } else if (event.type === "previewReset") {
          turn.resetPreview();
        } else if (event.type === "historyReset") {
          break;
        } else if ((event.type === "status" || event.type === "actionRequired") && event.status) {
          if (TERMINAL.has(event.status)) {
            finalStatus = await settle(executor, chatId, turn, writer);
            break;
          }
          writer.write(chatData(chatId, event.status, event.pendingToolCalls));
        }
        // Back-pressure: the next event is read only once the client has read this one's chunks.
        if (!await writer.drained()) break;
      }
    } finally {
      options.signal.removeEventListener("abort", stop);
      await events.return?.();
    }
  }
  if (options.signal.aborted) return;
  turn.close();
  writer.write({ type: "finish", finishReason: finalStatus === "REQUIRES_ACTION" ? "tool-calls" : finalStatus === "ERROR" ? "error" : "stop" });
}

/** The turn stopped running: sends the rows committed before that (the status was read before them). */
async function settle(executor: Executor, chatId: string, turn: TurnWriter, writer: ChunkSink): Promise<Status | null> {
  const { chat } = await sendCommitted(executor, chatId, turn, writer);
  if (!chat) return null;
  writer.write(chatData(chatId, chat.status, chat.pendingToolCalls));
  if (chat.status === "ERROR" && !turn.ended) {
    writer.write({ type: "error", errorText: chat.lastError?.message ?? "the turn ended with an error" });
  }
  return chat.status;
}
