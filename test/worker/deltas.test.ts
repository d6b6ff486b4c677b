// Part deltas through real PostgreSQL NOTIFY (worker/loop/deltas.ts): a flush of one payload and a flush of
// several (one per part, and the pieces of a delta too large for one payload) arrive in sequence order, each
// tagged with the episode, and the text they carry adds up to what was streamed.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { testLogger, waitFor } from "../support/worker.ts";
import { DeltaPublisher, MAX_DELTA_JSON_BYTES, type PartDelta } from "../../worker/loop/deltas.ts";

let db: TestDatabase;
let listener: pg.Client;
const received: PartDelta[] = [];
const fence = { chatId: "00000000-0000-4000-8000-000000000002", runnerId: "r", historyVersion: "7", generationAttempt: "1" };

test.before(async () => {
  db = await createTestDatabase();
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on("notification", (n) => received.push(JSON.parse(n.payload ?? "{}") as PartDelta));
  await listener.query(`listen ${pg.escapeIdentifier(`chatd:chat:${fence.chatId}:parts`)}`);
});
test.after(async () => {
  await listener.end();
  await db.drop();
});

test("one payload, then several (parts and split pieces): in order, tagged with the episode", async () => {
  const publisher = new DeltaPublisher(db.pool, testLogger, fence);
  publisher.accept({ type: "tool-input-start", partIndex: 0, toolCallId: "c1", toolName: "list_files", providerExecuted: false });
  publisher.accept({ type: "tool-input-delta", partIndex: 0, toolCallId: "c1", delta: '{"path":' });
  publisher.accept({ type: "tool-input-delta", partIndex: 0, toolCallId: "c1", delta: '"."}' });
  await publisher.flush();
  await waitFor("the single payload", async () => received.length === 1);
  assert.equal(received[0], { history_version: "7", generation_attempt: "1", seq: 1, part_index: 0, kind: "tool-input",
    delta: '{"path":"."}', tool_call_id: "c1", tool_name: "list_files" });

  const long = "x".repeat(MAX_DELTA_JSON_BYTES + 10);
  publisher.accept({ type: "text-delta", partIndex: 1, delta: "Hello " });
  publisher.accept({ type: "text-delta", partIndex: 1, delta: long });
  publisher.accept({ type: "reasoning-delta", partIndex: 2, delta: "why" });
  await publisher.close();
  await waitFor("the batch", async () => received.length === 4);
  assert.equal(received.map((d) => d.seq), [1, 2, 3, 4]);
  assert.ok(received.every((d) => d.history_version === "7" && d.generation_attempt === "1"));
  assert.equal(received.slice(1).map((d) => [d.part_index, d.kind]), [[1, "text"], [1, "text"], [2, "reasoning"]]);
  assert.is(received[1]!.delta + received[2]!.delta, `Hello ${long}`);
  assert.is(received[3]!.delta, "why");
});

test.run();
