// A chat's transcript as UI messages (GET /api/chat/:id/messages), one bounded page at a time: each user input,
// then its turn as one assistant message built from the same chunks a live stream sends (TurnWriter), folded by
// the AI SDK's own readUIMessageStream, so a loaded message and a streamed one are the same object.
//
// A page is cut between units: a user message, or one step of a turn (an assistant row and the tool results that
// answer its calls, which always follow it). A turn cut between two pages is the same message id on both, its
// parts split: the client appends the later page's parts to the message it has. Rows are read in batches, and a
// unit is folded when the next one starts, so a page costs its own size (plus one unit and one batch), whatever
// the transcript's length.
import { readUIMessageStream, type UIMessage } from "ai";
import { badRequest } from "../http/errors.ts";
import { positive } from "../http/streams.ts";
import type { Executor } from "./graphql.ts";
import { inputText, isInput, ROW_FIELDS, turnMessageId, type Chunk, type Row } from "./parts.ts";
import { TurnWriter } from "./turn-stream.ts";

export const DEFAULT_TRANSCRIPT_PAGE_BYTES = 1024 * 1024;

/** CHATD_TRANSCRIPT_PAGE_BYTES: the most one page of GET /api/chat/:id/messages holds. */
export function transcriptPageBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return positive(env, "CHATD_TRANSCRIPT_PAGE_BYTES", DEFAULT_TRANSCRIPT_PAGE_BYTES);
}

/** Rows per database read, at most: a page reads its rows in batches sized by what is left of the cap, so it reads
 * about one row past its end, not a batch. */
const ROW_BATCH = 32;
const FIRST_BATCH = 4;
const HEAD = `query($id: UUID!) { chatByRowId(rowId: $id) { rowId status pendingToolCalls lastError } }`;
const ROWS = `query($id: UUID!, $after: BigInt, $first: Int) { chatByRowId(rowId: $id) {
  messages(afterId: $after, first: $first) { nodes { ${ROW_FIELDS} } } } }`;
/** Newest first, without content: finding the running turn's input reads ids, not the turn. */
const INPUTS = `query($id: UUID!, $cursor: Cursor, $first: Int) { chatByRowId(rowId: $id) {
  chatMessagesByChatId(condition: {kind: MESSAGE}, orderBy: ROW_ID_DESC, first: $first, after: $cursor) {
    nodes { rowId role kind deleted } pageInfo { hasNextPage endCursor } } } }`;

export interface ChatHead {
  chatId: string;
  status: string;
  pendingToolCalls: unknown;
  lastError: unknown;
}

/** The chat's state without its transcript; null when the chat is not the caller's. */
export async function readHead(executor: Executor, chatId: string): Promise<ChatHead | null> {
  type Head = { chatByRowId: { rowId: string; status: string; pendingToolCalls: unknown; lastError: unknown } | null };
  const { chatByRowId: chat } = await executor.run<Head>(HEAD, { id: chatId });
  return chat && { chatId: chat.rowId, status: chat.status.toLowerCase(), pendingToolCalls: chat.pendingToolCalls, lastError: chat.lastError };
}

/** The latest input row's id (the running turn's, while a turn runs), read newest first by id only. */
export async function latestInputId(executor: Executor, chatId: string): Promise<string | null> {
  type Light = Pick<Row, "rowId" | "role" | "kind" | "deleted">;
  type Page = { chatByRowId: { chatMessagesByChatId: { nodes: Light[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null };
  let cursor: string | null = null;
  for (;;) {
    const { chatByRowId: chat }: Page = await executor.run<Page>(INPUTS, { id: chatId, cursor, first: 256 });
    if (!chat) return null;
    const found = chat.chatMessagesByChatId.nodes.find((row) => isInput(row as Row) && !row.deleted);
    if (found) return found.rowId;
    if (!chat.chatMessagesByChatId.pageInfo.hasNextPage) return null;
    cursor = chat.chatMessagesByChatId.pageInfo.endCursor;
  }
}

/** Where a page starts: after row `after` (null: the transcript's start), inside the turn of input `input`. */
export interface PageCursor {
  after: string | null;
  input: string | null;
}

const CURSOR = /^(\d{1,19})(?:\.(\d{1,19}))?$/;

/** `<after>` or `<after>.<input>`: opaque to clients, who pass back the `next` they were given. */
export function parseCursor(text: string | null): PageCursor {
  if (text === null) return { after: null, input: null };
  const match = CURSOR.exec(text);
  if (!match) throw badRequest("after", "must be the `next` cursor of a previous page");
  return { after: match[1]!, input: match[2] ?? null };
}

const cursorText = (cursor: PageCursor): string => (cursor.input === null ? cursor.after! : `${cursor.after}.${cursor.input}`);

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

export interface TranscriptPage {
  /** The page's messages as a JSON array: each part is serialized once, to count it and to send it. */
  messagesJson: string;
  /** Where the next page starts; null on the last page. */
  next: string | null;
  /** The page's size as the cap counts it: the JSON bytes of its user messages and assistant parts. */
  bytes: number;
}

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/** A message of the page: its JSON without `parts` (and without the closing brace), and each part's JSON. */
interface Entry {
  id: string;
  open: string;
  parts: string[];
}

function entryOf(message: UIMessage, parts: string[]): Entry {
  const { parts: _, ...rest } = message;
  return { id: message.id, open: JSON.stringify(rest).slice(0, -1), parts };
}

const entryJson = (entry: Entry): string => `${entry.open},"parts":[${entry.parts.join(",")}]}`;

/** Builds one page from rows given in rowId order; `add` returns false once the page is full. */
class PageBuilder {
  readonly entries: Entry[] = [];
  bytes = 0;
  full = false;
  /** The position before the unit being collected: the next page's start if that unit does not fit. */
  private unitStart: PageCursor;
  private position: PageCursor;
  private turn: { input: string; writer: TurnWriter } | null = null;
  private unit: Chunk[] = [];
  private readonly chatId: string;
  private readonly capBytes: number;

  constructor(chatId: string, start: PageCursor, capBytes: number) {
    this.chatId = chatId;
    this.capBytes = capBytes;
    this.unitStart = start;
    this.position = start;
    if (start.input !== null) this.openTurn(start.input, start.after!);
  }

  private openTurn(input: string, after: string): void {
    this.turn = { input, writer: new TurnWriter({ write: (chunk: Chunk) => void this.unit.push(chunk) }, after, []) };
  }

  /** Whether a unit of `bytes` fits; a page always takes its first unit, however large. */
  private fits(bytes: number): boolean {
    if (this.entries.length > 0 && this.bytes + bytes > this.capBytes) {
      this.full = true;
      return false;
    }
    this.bytes += bytes;
    return true;
  }

  /** Folds the unit collected so far into the page, or marks the page full before it. */
  private async closeUnit(): Promise<void> {
    const chunks = this.unit;
    this.unit = [];
    const turn = this.turn;
    if (!turn || chunks.length === 0) return;
    const id = turnMessageId(turn.input);
    // A page's units fold without any I/O between them: other requests get the event loop between two.
    await new Promise((resolve) => setImmediate(resolve));
    const folded = await fold([{ type: "start", messageId: id, messageMetadata: { chatId: this.chatId, inputMessageId: turn.input } },
      ...chunks, { type: "finish" }]);
    if (!folded || folded.parts.length === 0) return;
    const parts = folded.parts.map((part) => JSON.stringify(part));
    if (!this.fits(parts.reduce((sum, part) => sum + byteLength(part), 0))) return;
    const last = this.entries.at(-1);
    if (last?.id === id) last.parts.push(...parts);
    else this.entries.push(entryOf(folded, parts));
  }

  /** Takes one row; false once the page is full (the row is not taken: `next` points before its unit). */
  async add(row: Row): Promise<boolean> {
    const input = isInput(row) && !row.deleted;
    const step = !input && this.turn !== null && row.role === "ASSISTANT" && row.kind === "MESSAGE" && !row.deleted;
    if (input || step) {
      if (input) this.turn?.writer.close();
      await this.closeUnit();
      if (this.full) return false;
      this.unitStart = this.position;
    }
    if (input) {
      const message: UIMessage = { id: row.rowId, role: "user", parts: [{ type: "text", text: inputText(row) }],
        metadata: { chatId: this.chatId, structuredOutputRequestId: row.structuredOutputRequestId } };
      const entry = entryOf(message, message.parts.map((part) => JSON.stringify(part)));
      if (!this.fits(byteLength(entryJson(entry)))) return false;
      this.entries.push(entry);
      this.openTurn(row.rowId, row.rowId);
    } else if (!(isInput(row) && row.deleted)) {
      this.turn?.writer.row(row);
    }
    this.position = { after: row.rowId, input: this.turn?.input ?? null };
    return true;
  }

  /** The page after the last row: `next` when it was cut, else null. */
  async finish(): Promise<string | null> {
    this.turn?.writer.close();
    await this.closeUnit();
    return this.full ? cursorText(this.unitStart) : null;
  }
}

/**
 * One page of the transcript from `cursor`: whole units until the next would take it past `capBytes` (a page
 * always holds one unit, so a unit larger than the cap comes alone). Null when the chat is not the caller's.
 */
export async function readPage(executor: Executor, chatId: string, cursor: PageCursor, capBytes: number): Promise<TranscriptPage | null> {
  const page = new PageBuilder(chatId, cursor, capBytes);
  let after = cursor.after;
  let batch = FIRST_BATCH;
  let seen = 0;
  for (;;) {
    type Rows = { chatByRowId: { messages: { nodes: Row[] } } | null };
    const { chatByRowId: chat }: Rows = await executor.run<Rows>(ROWS, { id: chatId, after, first: batch });
    if (!chat) return null;
    const rows = chat.messages.nodes;
    for (const row of rows) if (!await page.add(row)) break;
    if (page.full || rows.length < batch) break;
    after = rows.at(-1)!.rowId;
    // The rows that the rest of the page is likely to hold, at the page's bytes per row so far.
    seen += rows.length;
    const perRow = Math.max(1, page.bytes / seen);
    batch = Math.min(ROW_BATCH, Math.max(1, Math.ceil((capBytes - page.bytes) / perRow) + 1));
  }
  const next = await page.finish();
  return { messagesJson: `[${page.entries.map(entryJson).join(",")}]`, next, bytes: page.bytes };
}
