// Part deltas for live previews: `pg_notify('chatd:chat:<id>:parts', ...)`, tagged with the episode
// (history_version, generation_attempt) and a sequence number from 1. Deltas are coalesced (every 50 ms or
// 4 KiB) and sent in one round trip per flush; each payload stays far under PostgreSQL's 8000-byte NOTIFY
// limit, so a large delta is split. Deltas are hints: a failed publish is logged and the step goes on.
import type pg from "pg";
import type { Logger } from "../../src/log.ts";
import type { StepEvent } from "../../src/providers/index.ts";
import { partsChannel } from "../../src/channels.ts";
import { isConnectionError } from "../../src/db/pool.ts";
import { PUBLISH_DELTAS } from "./transitions.ts";
import type { Fence } from "./types.ts";

export const FLUSH_MS = 50;
export const FLUSH_BYTES = 4096;
/** Budget for the delta text inside one payload, measured as JSON-escaped UTF-8 (escapes can grow text 6x). */
export const MAX_DELTA_JSON_BYTES = 3000;

export interface PartDelta {
  history_version: string;
  generation_attempt: string;
  seq: number;
  part_index: number;
  kind: "text" | "reasoning" | "tool-input";
  delta: string;
  tool_call_id?: string;
  tool_name?: string;
}

type Pending = Omit<PartDelta, "seq" | "history_version" | "generation_attempt">;

const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text), "utf8");

/** Splits text into pieces whose JSON-escaped form fits the payload budget, never inside a surrogate pair. */
export function splitDelta(text: string, budget = MAX_DELTA_JSON_BYTES): string[] {
  if (jsonBytes(text) <= budget) return [text];
  const pieces: string[] = [];
  let current = "";
  let size = 2;
  for (const char of text) {
    const add = jsonBytes(char) - 2;
    if (size + add > budget && current !== "") {
      pieces.push(current);
      current = "";
      size = 2;
    }
    current += char;
    size += add;
  }
  if (current !== "") pieces.push(current);
  return pieces;
}

export class DeltaPublisher {
  private readonly pool: pg.Pool;
  private readonly log: Logger;
  private readonly channel: string;
  private readonly episode: { history_version: string; generation_attempt: string };
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private seq = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(pool: pg.Pool, log: Logger, fence: Fence) {
    this.pool = pool;
    this.log = log;
    this.channel = partsChannel(fence.chatId);
    this.episode = { history_version: fence.historyVersion, generation_attempt: fence.generationAttempt };
  }

  /** Takes a provider stream event (synchronous: streamStep's onEvent must not block). */
  accept(event: StepEvent): void {
    switch (event.type) {
      case "text-delta":
      case "reasoning-delta":
        this.add({ part_index: event.partIndex, kind: event.type === "text-delta" ? "text" : "reasoning", delta: event.delta });
        break;
      case "tool-input-start":
        this.add({ part_index: event.partIndex, kind: "tool-input", delta: "", tool_call_id: event.toolCallId, tool_name: event.toolName });
        break;
      case "tool-input-delta":
        this.add({ part_index: event.partIndex, kind: "tool-input", delta: event.delta, tool_call_id: event.toolCallId });
        break;
      case "warnings":
        break;
    }
  }

  private add(delta: Pending): void {
    const last = this.pending.at(-1);
    // Coalesce consecutive deltas of the same part into one payload.
    if (last != null && last.part_index === delta.part_index && last.kind === delta.kind && delta.tool_name == null) {
      last.delta += delta.delta;
    } else {
      this.pending.push(delta);
    }
    this.pendingBytes += Buffer.byteLength(delta.delta, "utf8");
    if (this.pendingBytes >= FLUSH_BYTES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** The buffered deltas as payloads with their sequence numbers, taken out of the buffer. */
  private takePayloads(): string[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const payloads: string[] = [];
    for (const item of batch) {
      for (const piece of splitDelta(item.delta)) {
        payloads.push(JSON.stringify({ ...this.episode, seq: ++this.seq, ...item, delta: piece }));
      }
    }
    return payloads;
  }

  /** Sends what is buffered; resolves when every earlier flush has been sent (call before a commit). */
  flush(): Promise<void> {
    const payloads = this.takePayloads();
    if (payloads.length > 0) {
      // One payload (the usual flush: consecutive deltas of one part coalesce) is sent as it is, without building
      // and escaping an array literal for unnest.
      const query: pg.QueryConfig<unknown[]> = payloads.length === 1
        ? { name: "chatd_part_delta", text: "select pg_notify($1, $2)", values: [this.channel, payloads[0]] }
        : { name: "chatd_part_deltas", text: PUBLISH_DELTAS,
          values: [this.channel, payloads] };
      // Chained, so payloads reach PostgreSQL in sequence order.
      this.inFlight = this.inFlight.then(() =>
        this.pool.query(query).then(() => undefined, (error: unknown) => {
          // A lost database is logged once per outage by the pool (src/db/pool.ts), not once per flush.
          if (isConnectionError(error)) this.log.debug({ err: error }, "publishing part deltas failed");
          else this.log.warn({ err: error }, "publishing part deltas failed");
        }));
    }
    return this.inFlight;
  }

  close(): Promise<void> {
    return this.flush();
  }

  /** Ends the stream without sending the rest: waits for the flushes already sent and returns the payloads still
   * buffered, in sequence order, for the step's commit to publish in its own transaction (transitions.ts). */
  async finish(): Promise<string[]> {
    const payloads = this.takePayloads();
    await this.inFlight;
    return payloads;
  }
}
