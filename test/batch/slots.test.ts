// Batch slots (migrations/0007, sql/095_batches.sql): a finishing item hands its slot to the next pending item
// without the batch lock, so the finishing transactions of one batch do not wait for each other, and the slot's
// unique index keeps at most `concurrency` items running even when a dispatch runs beside them. Two connections with
// open transactions are the barrier: a statement that waited on the other's lock would time out (lock_timeout).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { acquire, commitCandidate, Connections, createUser, finishTurn, setStructuredExperiment } from "../support/chats.ts";
import { batch, createBatch, items, lines, statusCounts, validated } from "./helpers.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  user = await createUser(db, "slots");
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});

async function openTransaction(): Promise<pg.Client> {
  const { client } = await connections.open(db);
  // A wait that should not happen fails the test (55P03) instead of hanging it.
  await client.query("set lock_timeout = '10s'");
  await client.query("begin");
  return client;
}

/** Brings an item's chat to the point where finishing its turn writes the success receipt. */
async function readyToFinish(chatId: string, line: number) {
  return commitCandidate(db, await acquire(db, chatId), `{"line": ${line}}`);
}

const runningSlots = async (id: string) =>
  (await items(db, id)).filter((i) => i.status === "running").map((i) => [i.line, i.slot]);

test("two items finishing at once each start a successor in their own slot, neither waiting for the other", async () => {
  const b = await createBatch(db, user, lines(5), { concurrency: 2 });
  await validated(db, b.id);
  const [first, second] = (await items(db, b.id)).filter((i) => i.status === "running");
  assert.equal(await runningSlots(b.id), [[1, 1], [2, 2]]);
  const fenceA = await readyToFinish(first!.chat_id!, 1);
  const fenceB = await readyToFinish(second!.chat_id!, 2);
  const a = await openTransaction();
  const c = await openTransaction();
  assert.is(await finishTurn(db, fenceA, null, a), "waiting");
  // A holds its transaction open (its successor, line 3, is locked): B's finish must not wait for A.
  assert.is(await finishTurn(db, fenceB, null, c), "waiting");
  await a.query("commit");
  await c.query("commit");
  assert.equal(await runningSlots(b.id), [[3, 1], [4, 2]]);
  assert.equal(await statusCounts(db, b.id), { succeeded: 2, running: 2, pending: 1 });
});

test("a dispatch beside an open finishing transaction never runs more than `concurrency` items", async () => {
  const b = await createBatch(db, user, lines(4), { concurrency: 2 });
  await validated(db, b.id);
  const first = (await items(db, b.id)).find((i) => i.line === 1)!;
  const fence = await readyToFinish(first.chat_id!, 1);
  const finisher = await openTransaction();
  await finishTurn(db, fence, null, finisher);
  // The finishing transaction holds slot 1 for line 3; the dispatch finds no free slot and starts nothing.
  const { rows } = await db.pool.query<{ n: number }>("select chat_private.dispatch_batch($1) as n", [b.id]);
  assert.is(rows[0]!.n, 0);
  await finisher.query("commit");
  assert.equal(await runningSlots(b.id), [[2, 2], [3, 1]]);
});

test("the table refuses a second running item in a slot, and a running item without one", async () => {
  const b = await createBatch(db, user, lines(3), { concurrency: 2 });
  await validated(db, b.id);
  assert.is(await sqlState(db.pool.query(
    "update chat_public.batch_items set slot = 1 where batch_id = $1 and line = 2", [b.id])), "23505");
  assert.is(await sqlState(db.pool.query(
    "update chat_public.batch_items set slot = null where batch_id = $1 and line = 2", [b.id])), "23514");
});

test("the last two items finishing at once complete the batch exactly once", async () => {
  const b = await createBatch(db, user, lines(2), { concurrency: 2 });
  await validated(db, b.id);
  const [first, second] = await items(db, b.id);
  const fenceA = await readyToFinish(first!.chat_id!, 1);
  const fenceB = await readyToFinish(second!.chat_id!, 2);
  const a = await openTransaction();
  await finishTurn(db, fenceA, null, a);
  const c = await openTransaction();
  // B waits for A's batch lock (the completion check) only at the tail; it sees A's commit once A commits.
  const finishingB = finishTurn(db, fenceB, null, c);
  await a.query("commit");
  await finishingB;
  await c.query("commit");
  const done = await batch(db, b.id);
  assert.is(done.status, "completed");
  assert.equal(await statusCounts(db, b.id), { succeeded: 2 });
});

test.run();
