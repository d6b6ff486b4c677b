// TurnWriter (src/api/ui-chat/turn-stream.ts) without a database: rows are emitted once, in numeric rowId order
// ("10" follows "9"), a preview seen from its first delta is finished by its commit, and a preview with a gap or a
// stale episode never leaves a part twice.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { UIMessageChunk } from "ai";
import type { Row } from "../../src/api/ui-chat/parts.ts";
import { TurnWriter } from "../../src/api/ui-chat/turn-stream.ts";

function writer(cursor = "1"): { turn: TurnWriter; chunks: UIMessageChunk[] } {
  const chunks: UIMessageChunk[] = [];
  return { turn: new TurnWriter({ write: (chunk) => void chunks.push(chunk) }, cursor, []), chunks };
}

const row = (rowId: string, text: string, revision = rowId): Row => ({
  rowId, revision, role: "ASSISTANT", kind: "MESSAGE", deleted: false, content: [{ type: "text", text }],
  structuredOutputRequestId: null, structuredOutput: null, structuredOutputRequestByReceiptMessageId: null,
});
const delta = (historyVersion: string, seq: number, text: string) =>
  ({ historyVersion, generationAttempt: "1", seq: String(seq), data: { part_index: 0, kind: "text" as const, delta: text } });
const texts = (chunks: UIMessageChunk[]) => chunks.filter((c) => c.type === "text-delta").map((c) => (c as { delta: string }).delta).join("");

test("rowIds compare as numbers: 10 comes after 9, and a row at or below the cursor is not sent again", () => {
  const { turn, chunks } = writer("8");
  turn.row(row("9", "nine "));
  turn.row(row("10", "ten"));
  turn.row(row("9", "nine again"));
  assert.is(texts(chunks), "nine ten");
  assert.is(turn.cursor, "10");
});

test("a preview from seq 1 is completed by its commit with only what it missed", () => {
  const { turn, chunks } = writer();
  turn.delta(delta("5", 1, "Hel"));
  turn.delta(delta("5", 2, "lo"));
  turn.row(row("6", "Hello world"));
  assert.is(texts(chunks), "Hello world");
  assert.is(chunks.filter((c) => c.type === "text-start").length, 1);
  assert.not.ok(chunks.some((c) => c.type === "reset-step"));
});

test("a gap in the deltas resets the step and the commit sends the whole part; late deltas of a committed step are ignored", () => {
  const { turn, chunks } = writer();
  turn.delta(delta("5", 1, "Hel"));
  turn.delta(delta("5", 3, "world"));
  turn.row(row("6", "Hello world"));
  turn.delta(delta("5", 4, " late"));
  const reset = chunks.findIndex((c) => c.type === "reset-step");
  assert.ok(reset > 0);
  assert.is(texts(chunks.slice(reset)), "Hello world");
  assert.not.ok(texts(chunks).includes("late"));
});

test("a step joined after its first delta is shown only when it commits", () => {
  const { turn, chunks } = writer();
  turn.delta(delta("5", 2, "lo"));
  assert.is(chunks.length, 0);
  turn.row(row("6", "Hello"));
  assert.is(texts(chunks), "Hello");
});

test("a step's deltas notified after its commit (the commit's own transaction sends them) add nothing", () => {
  const { turn, chunks } = writer();
  turn.row(row("6", "Hello", "6"));
  turn.delta(delta("5", 1, "Hello"));
  assert.is(texts(chunks), "Hello");
  assert.is(chunks.filter((c) => c.type === "start-step").length, 1);
  turn.delta(delta("6", 1, "next step"));
  assert.is(texts(chunks), "Hellonext step", "the next step (history_version = the commit's revision) streams");
});

test.run();
