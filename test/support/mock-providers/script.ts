// The protocol-neutral script a mock provider plays for one request. Each wire encoder
// (chat.ts, responses.ts, anthropic.ts) turns a MockTurn into that protocol's events.

export interface MockToolCall {
  id?: string;
  name: string;
  /** Raw argument bytes, one element per streamed fragment (joined they are the exact text). */
  fragments: string[];
}

export interface MockReasoning {
  text: string;
  /** Anthropic: thinking signature. */
  signature?: string;
  /** OpenAI Responses: encrypted reasoning content; item id. */
  encryptedContent?: string;
  itemId?: string;
  /** Anthropic: send a redacted_thinking block carrying this data instead. */
  redactedData?: string;
}

/** A point in the event stream where the server waits for the test. */
export interface MockHold {
  /** Number of protocol events written before holding. */
  afterEvents: number;
  /** The server writes the rest once this settles. */
  release: Promise<unknown>;
  /** Called when the hold is reached (the client has the first events on the wire). */
  reached?: () => void;
}

export interface MockTurn {
  kind?: "turn";
  reasoning?: MockReasoning;
  /** Text fragments (each one delta). */
  text?: string[];
  toolCalls?: MockToolCall[];
  /** Default: tool-calls when tool calls are present, else stop. */
  finish?: "stop" | "tool-calls" | "length" | "content-filter" | "pause-turn";
  /** OpenAI chat/Responses: a refusal message instead of text (Anthropic: stop_reason refusal). */
  refusal?: string;
  /** End the connection after the content, without any finish signal. */
  truncate?: boolean;
  /** An in-stream error event after the content (Anthropic `error`, Chat/Responses `error`). */
  streamError?: { type: string; message: string };
  hold?: MockHold;
  /** Wait before each event (tests should prefer holds; available for demos). */
  delayMs?: number;
  usage?: { input: number; output: number };
}

export interface MockHttpError {
  kind: "http-error";
  status: number;
  /** Provider body; tests assert it never reaches error messages. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Replays a `*.chunks.txt` fixture: one JSON event payload per line. */
export interface MockFixture {
  kind: "fixture";
  path: string;
}

/** Raw event payloads written as given (for malformed or unusual streams). */
export interface MockRawEvents {
  kind: "raw";
  events: unknown[];
  done?: boolean;
}

export type MockResponse = MockTurn | MockHttpError | MockFixture | MockRawEvents;

export interface Barrier<T = void> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

export function barrier<T = void>(): Barrier<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function finishOf(turn: MockTurn): NonNullable<MockTurn["finish"]> {
  return turn.finish ?? ((turn.toolCalls?.length ?? 0) > 0 ? "tool-calls" : "stop");
}
