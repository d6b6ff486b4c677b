// Batch acceptance with real worker processes and the scripted provider (deterministic, not a real model):
// a 1,000-line batch drains with one receipt per item and results that match the receipts; a worker SIGKILLed
// twice mid-batch loses and repeats nothing; concurrency is never exceeded. Item outcomes depend on the
// structured-output runtime in this build (configuration_error before the finalizer exists, succeeded after),
// so these tests accept any terminal status and compare results with the receipts themselves.
import { PassThrough } from "node:stream";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { count, createUser, setStructuredExperiment } from "../support/chats.ts";
import { fastSettings, makeWorkspaces, waitFor } from "../support/worker.ts";
import { writeResults } from "../../src/cli/batch-io.ts";
import { batch, createBatch, envelope, lines } from "./helpers.ts";

let db: TestDatabase;
let alice: string;
let workspaces: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  alice = await createUser(db, "alice");
  workspaces = await makeWorkspaces();
});
test.after(async () => {
  await db.drop();
});

function spawnWorker(concurrency: number) {
  const child = spawn(process.execPath, [join(import.meta.dirname, "worker-process.ts")], {
    env: { ...process.env, CHATD_BATCH_WORKER_URL: db.url, CHATD_WORKSPACES_ROOT: workspaces, CHATD_FAULTS: "",
      CHATD_WORKER_CONCURRENCY: String(concurrency) },
    stdio: ["ignore", "ignore", process.env.CHATD_TEST_LOG ? "inherit" : "ignore"],
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { child, exited };
}

const SCHEMA = { type: "object", properties: { answer: { type: "string" }, n: { type: "integer" } }, required: ["answer"] };

async function finishedItems(id: string): Promise<number> {
  return count(db, "select 1 from chat_public.batch_items where batch_id = $1 and status not in ('pending', 'running')", [id]);
}

const waitDone = (id: string, timeoutMs = 60_000) =>
  waitFor(`batch ${id} to finish`, async () => (await batch(db, id)).finished_at != null || undefined, timeoutMs);

/** The most items ever running at once, from the items' own timestamps (a slot freed and refilled in one
 * transaction has finished_at = the next item's started_at, so it does not count as overlap). */
async function peakInFlight(id: string): Promise<number> {
  const { rows } = await db.pool.query<{ peak: number }>(
    `select coalesce(max(n), 0)::int as peak from (
       select (select count(*) from chat_public.batch_items j where j.batch_id = i.batch_id and j.started_at <= i.started_at
                 and (j.finished_at is null or j.finished_at > i.started_at)) as n
       from chat_public.batch_items i where i.batch_id = $1 and i.started_at is not null) s`, [id]);
  return rows[0]!.peak;
}

/** Exactly one chat, one turn, one request and one receipt per item; every item terminal. */
async function assertExactlyOnce(id: string, total: number): Promise<void> {
  const { rows } = await db.pool.query(
    `select count(*)::int as items, count(distinct i.chat_id)::int as chats,
            count(*) filter (where i.status in ('pending', 'running'))::int as open,
            count(*) filter (where r.receipt_message_id is null)::int as without_receipt,
            (select count(*)::int from chat_public.chat_messages m join chat_public.batch_items x on x.chat_id = m.chat_id
               where x.batch_id = $1 and m.kind = 'receipt') as receipts,
            (select count(*)::int from chat_private.turn_progress t join chat_public.batch_items x on x.chat_id = t.chat_id
               where x.batch_id = $1) as turns,
            (select count(*)::int from chat_private.idempotency_keys k where k.key like 'batch:' || $1 || ':%') as keys
     from chat_public.batch_items i join chat_public.structured_output_requests r on r.id = i.structured_output_request_id
     where i.batch_id = $1`, [id]);
  assert.equal(rows[0], { items: total, chats: total, open: 0, without_receipt: 0, receipts: total, turns: total, keys: total });
}

test("a 1,000-line batch drains with 1,000 receipts; results match the receipts exactly; concurrency holds", async () => {
  const worker = spawnWorker(16);
  try {
    const b = await createBatch(db, alice, lines(1000, (i) => `question ${i}`), { format: envelope(SCHEMA, "answer"), concurrency: 24 });
    await waitDone(b.id, 80_000);
    assert.is((await batch(db, b.id)).status, "completed");
    await assertExactlyOnce(b.id, 1000);
    const peak = await peakInFlight(b.id);
    assert.ok(peak <= 24 && peak >= 2, `peak in flight ${peak}`);
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    assert.is(await writeResults(db.pool as never, b.id, "jsonl", out, 300), 1000);
    const results = text.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const { rows: receipts } = await db.pool.query<{ line: number; request_id: string; status: string; value_json: string | null; code: string | null }>(
      `select i.line, r.id as request_id, m.structured_output ->> 'status' as status, (m.structured_output -> 'value')::text as value_json,
              m.structured_output -> 'error' ->> 'code' as code
       from chat_public.batch_items i join chat_public.structured_output_requests r on r.id = i.structured_output_request_id
       join chat_public.chat_messages m on m.id = r.receipt_message_id where i.batch_id = $1 order by i.line`, [b.id]);
    assert.equal(results.map((r) => [r.line, r.request_id, r.status, r.value_json, r.error_code]),
      receipts.map((r) => [r.line, r.request_id, r.status, r.value_json, r.code]));
    const statuses = new Set(receipts.map((r) => r.status));
    console.log(`  1,000-line batch outcomes (this build's runtime): ${[...statuses].join(", ")}; peak in flight ${peak}`);
  } finally {
    worker.child.kill("SIGTERM");
    await worker.exited;
  }
});

test("a worker SIGKILLed twice mid-batch and restarted: the batch completes, nothing runs twice, nothing is lost", async () => {
  const b = await createBatch(db, alice, lines(200, (i) => `crash test ${i}`), { format: envelope(SCHEMA, "answer"), concurrency: 8 });
  let worker = spawnWorker(8);
  try {
    for (const threshold of [40, 110]) {
      await waitFor(`${threshold} items`, async () => (await finishedItems(b.id)) >= threshold || undefined, 60_000);
      worker.child.kill("SIGKILL");
      await worker.exited;
      worker = spawnWorker(8);
    }
    await waitDone(b.id, 80_000);
  } finally {
    worker.child.kill("SIGTERM");
    await worker.exited;
  }
  assert.is((await batch(db, b.id)).status, "completed");
  await assertExactlyOnce(b.id, 200);
  assert.ok(await peakInFlight(b.id) <= 8);
});

test("cancel mid-batch: running items are interrupted with receipts, pending ones never start, nothing stays pending", async () => {
  const worker = spawnWorker(4);
  try {
    const slow = JSON.stringify({ script: [{ delay_ms: 30_000, text: "slow" }] });
    const b = await createBatch(db, alice, lines(30, () => slow), { concurrency: 3 });
    await waitFor("three items streaming", async () => (await count(db,
      `select 1 from chat_private.chat_leases l join chat_public.batch_items i on i.chat_id = l.chat_id where i.batch_id = $1`, [b.id])) === 3 || undefined);
    await db.as("chat_user", alice, (c) => c.query("select chat_public.cancel_batch($1)", [b.id]), true);
    await waitDone(b.id);
    const { rows } = await db.pool.query(
      "select status::text, error_code, count(*)::int as n from chat_public.batch_items where batch_id = $1 group by 1, 2 order by 1, 2", [b.id]);
    assert.equal(rows, [{ status: "canceled", error_code: "batch_canceled", n: 27 }, { status: "canceled", error_code: "operator_canceled", n: 3 }]);
    assert.is(await count(db, `select 1 from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
      where c.owner_id = $1 and r.status = 'pending'`, [alice]), 0);
    assert.is(await count(db, "select 1 from chat_public.batch_items where batch_id = $1 and chat_id is not null", [b.id]), 3);
  } finally {
    worker.child.kill("SIGTERM");
    await worker.exited;
  }
});

test.run();
