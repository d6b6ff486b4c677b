// The client's reads around the console: chats.list (newest first, pending structured requests counted),
// chats.queue (what waits in a busy chat, in run order) and batches.list / batches.results (every line in order,
// paged, values as exact receipt text) against a live chatd with the scripted provider.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { BatchItemResult } from "@chatd/client";
import { waitFor } from "../support/worker.ts";
import { finalize, script, startClientStack, type ClientStack } from "./stack.ts";

let stack: ClientStack;
test.before(async () => { stack = await startClientStack(); });
test.after(async () => { await stack.close(); });

const SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
const ENVELOPE = JSON.stringify({ type: "json_schema", json_schema: { name: "count", schema: SCHEMA } });
const BIG = "1234567890123456789012345";
const slow = script({ text: "Busy for a while.", delay_ms: 60_000 });

test("chats.list: newest first, with status and the count of structured requests still pending; chats.queue: the waiting messages in run order", async () => {
  const client = stack.client();
  const older = await client.chats.create({ prompt: "hello", title: "older" });
  const busy = await client.chats.create({ prompt: slow, title: "busy", responseFormat: ENVELOPE, workspace: "ws" });
  await waitFor("the busy chat runs", async () => (await client.chats.get(busy.chatId))?.status === "running");
  const a = await client.chats.send(busy.chatId, { prompt: "first queued" });
  const b = await client.chats.send(busy.chatId, { prompt: "second queued", responseFormat: ENVELOPE });
  const queue = await client.chats.queue(busy.chatId);
  assert.equal(queue.map((q) => [q.queuedMessageId, q.chatId, q.content, q.structuredOutputRequestId]), [
    [a.queuedMessageId, busy.chatId, [{ type: "text", text: "first queued" }], null],
    [b.queuedMessageId, busy.chatId, [{ type: "text", text: "second queued" }], b.structuredOutputRequestId],
  ]);
  assert.equal(await client.chats.queue("00000000-0000-4000-8000-000000000000"), [], "an unknown chat has no queue");

  const chats = await client.chats.list();
  const mine = chats.filter((c) => c.chatId === busy.chatId || c.chatId === older.chatId);
  assert.equal(mine.map((c) => [c.chatId, c.title, c.status, c.workspace, c.pendingStructuredRequests]), [
    [busy.chatId, "busy", "running", "ws", 2],
    [older.chatId, "older", (await client.chats.get(older.chatId))!.status, null, 0],
  ]);
  assert.ok(chats.indexOf(mine[0]!) < chats.indexOf(mine[1]!), "newest first");
  assert.is((await client.chats.list({ first: 1 })).length, 1);

  await client.chats.deleteQueued(b.queuedMessageId!);
  assert.equal((await client.chats.queue(busy.chatId)).map((q) => q.queuedMessageId), [a.queuedMessageId]);
  const [after] = (await client.chats.list()).filter((c) => c.chatId === busy.chatId);
  assert.is(after!.pendingStructuredRequests, 1, "the deleted message's request got its canceled receipt");
  await client.chats.interrupt(busy.chatId);
});

test("batches.list and batches.results: item counts, every line in order across pages, exact values and error codes", async () => {
  const client = stack.client();
  const lines = [script(finalize(`{"n": ${BIG}}`)), script({ text: "No JSON from me." }), script(finalize('{"n": 7}'))];
  const { createBatch } = await client.request<{ createBatch: { result: { rowId: string } } }>(
    `mutation($rf: String!, $items: JSON!) { createBatch(input: {name: "client-batch", responseFormat: $rf, items: $items, concurrency: 2}) {
      result { rowId } } }`,
    { rf: ENVELOPE, items: lines.map((text, i) => ({ line: i + 1, content: [{ type: "text", text }] })) });
  const batchId = createBatch.result.rowId;
  await waitFor("the batch finishes", async () => {
    const batch = (await client.batches.list()).find((b) => b.batchId === batchId);
    return batch !== undefined && batch.finishedAt !== null;
  }, 60_000);
  const batch = (await client.batches.list()).find((b) => b.batchId === batchId)!;
  assert.equal([batch.name, batch.totalItems, batch.concurrency, batch.itemCounts],
    ["client-batch", 3, 2, { pending: 0, running: 0, succeeded: 2, failed: 1, canceled: 0 }]);

  const results: BatchItemResult[] = [];
  for await (const item of client.batches.results(batchId, { pageSize: 2 })) results.push(item);
  assert.equal(results.map((r) => [r.line, r.status, r.valueJson]), [
    [1, "succeeded", `{"n": ${BIG}}`], [2, "failed", null], [3, "succeeded", '{"n": 7}']]);
  assert.type(results[1]!.errorCode, "string");
  assert.ok(results.every((r) => r.structuredOutputRequestId && r.chatId), JSON.stringify(results));
  const none: BatchItemResult[] = [];
  for await (const item of client.batches.results("00000000-0000-4000-8000-000000000000")) none.push(item);
  assert.equal(none, [], "an unknown batch has no results");
});

test.run();
