// Batches in SQL (sql/095_batches.sql), driven without a worker process: submission rules, the validation verdict,
// dispatch by the request trigger under the concurrency limit, idempotency, cancel, RLS and the operator's view.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { asUser, count, createUser, setStructuredExperiment } from "../support/chats.ts";
import { batch, createBatch, endItem, envelope, items, lines, statusCounts, validated } from "./helpers.ts";

let db: TestDatabase;
let alice: string;
let bob: string;

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  alice = await createUser(db, "alice");
  bob = await createUser(db, "bob");
});
test.after(async () => {
  await db.drop();
});

const running = async (id: string) => (await items(db, id)).filter((i) => i.status === "running");

test("a batch starts validating with its validation job; nothing runs before the verdict", async () => {
  const b = await createBatch(db, alice, lines(5), { concurrency: 2 });
  assert.is(b.status, "validating");
  assert.is(b.total_items, 5);
  assert.is(await count(db, "select 1 from graphile_worker.jobs where key = $1", [`batch-validate:${b.id}`]), 1);
  assert.is(await count(db, "select 1 from chat_public.chats where owner_id = $1", [alice]), 0);
  assert.equal(await statusCounts(db, b.id), { pending: 5 });
});

test("dispatch keeps exactly `concurrency` items running, in line order, until the batch completes", async () => {
  const b = await createBatch(db, alice, lines(7), { concurrency: 3 });
  assert.is(await validated(db, b.id), "running");
  assert.equal((await running(b.id)).map((i) => i.line), [1, 2, 3]);
  const keys = await db.pool.query("select key from chat_private.idempotency_keys where owner_id = $1 and key like $2 order by key",
    [alice, `batch:${b.id}:%`]);
  assert.equal(keys.rows.map((r) => r.key), [1, 2, 3].map((l) => `batch:${b.id}:${l}`));
  let peak = 0;
  for (;;) {
    const now = await running(b.id);
    peak = Math.max(peak, now.length);
    if (now.length === 0) break;
    const first = now[0]!;
    if (first.line % 2 === 0) await endItem(db, first.chat_id!, { code: "not_produced" });
    else await endItem(db, first.chat_id!, { valueJson: `{"line": ${first.line}}` });
  }
  assert.is(peak, 3);
  assert.equal(await statusCounts(db, b.id), { succeeded: 4, failed: 3 });
  const done = await batch(db, b.id);
  assert.is(done.status, "completed");
  assert.ok(done.finished_at != null);
  const failed = (await items(db, b.id)).find((i) => i.line === 2)!;
  assert.equal([failed.error_code, failed.error_message], ["not_produced", "failed: not_produced"]);
  assert.is(await count(db, "select 1 from chat_public.batch_items where batch_id = $1 and chat_id is not null", [b.id]), 7);
});

test("an invalid schema verdict fails the batch before any item starts", async () => {
  const b = await createBatch(db, alice, lines(3));
  assert.is(await validated(db, b.id, "invalid response_format: response_format.json_schema.schema: bad"), "failed");
  const row = await batch(db, b.id);
  assert.is(row.error, "invalid response_format: response_format.json_schema.schema: bad");
  assert.equal(await statusCounts(db, b.id), { canceled: 3 });
  assert.ok((await items(db, b.id)).every((i) => i.chat_id == null && i.error_code === "batch_failed"));
  // A late second verdict changes nothing.
  assert.is(await validated(db, b.id, null), "failed");
});

test("an invalid line fails only its item, with its line number; invalid content fails at dispatch", async () => {
  const b = await createBatch(db, alice, [
    { line: 1, content: [{ type: "text", text: "ok" }] },
    { line: 2, error: "line 2: not valid JSON (unexpected end)" },
    { line: 3, content: [{ type: "image", url: "x" }] },
    { line: 4, content: [{ type: "text", text: "ok too" }] },
  ], { concurrency: 2 });
  await validated(db, b.id);
  const rows = await items(db, b.id);
  assert.equal(rows.map((i) => [i.line, i.status, i.error_code]), [
    [1, "running", null], [2, "failed", "invalid_line"], [3, "failed", "invalid_input"], [4, "running", null],
  ]);
  assert.match(rows[2]!.error_message!, /content\[0\]\.type/);
  assert.is(rows[1]!.error_message, "line 2: not valid JSON (unexpected end)");
});

test("the same idempotency key returns the first batch; nothing is duplicated", async () => {
  const first = await createBatch(db, alice, lines(3), { key: "file-sha" });
  const again = await createBatch(db, alice, lines(3), { key: "file-sha" });
  assert.is(again.id, first.id);
  assert.is(await count(db, "select 1 from chat_public.batch_items where batch_id = $1", [first.id]), 3);
  // Another user's key space is separate.
  const other = await createBatch(db, bob, lines(1), { key: "file-sha" });
  assert.is.not(other.id, first.id);
});

test("submission rules: json_schema only, experiment gate, limits, shape of items", async () => {
  const submit = (items: unknown, format = envelope(), concurrency = 4) => asUser(db, alice, (c) =>
    c.query("select chat_public.create_batch($1, $2, concurrency => $3)", [format, JSON.stringify(items), concurrency]));
  assert.is(await sqlState(submit(lines(1), '{"type":"text"}')), "RFINV");
  assert.is(await sqlState(submit(lines(1), '{"type":"json_schema"}')), "RFINV");
  assert.is(await sqlState(submit([])), "CIINV");
  assert.is(await sqlState(submit([{ line: 1, content: [] }, { line: 1, content: [] }])), "CIINV");
  assert.is(await sqlState(submit([{ line: 0, content: [] }])), "CIINV");
  assert.is(await sqlState(submit([{ line: 1, content: [], error: "x" }])), "CIINV");
  assert.is(await sqlState(submit(lines(1), envelope(), 65)), "CIINV");
  const tooMany = Array.from({ length: 100_001 }, (_, i) => ({ line: i + 1, error: "x" }));
  assert.is(await sqlState(submit(tooMany)), "BTLIM");
  await setStructuredExperiment(db, false);
  try {
    assert.is(await sqlState(submit(lines(1))), "RFOFF");
  } finally {
    await setStructuredExperiment(db, true);
  }
  assert.is(await sqlState(db.as("chat_anonymous", null, (c) => c.query("select chat_public.create_batch($1, $2)",
    [envelope(), JSON.stringify(lines(1))]))), "NOAUT");
});

test("cancel: pending items never start, running ones are interrupted by the job and get receipts", async () => {
  const b = await createBatch(db, alice, lines(6), { concurrency: 2 });
  await validated(db, b.id);
  const canceled = await asUser(db, alice, (c) => c.query("select * from chat_public.cancel_batch($1)", [b.id]));
  assert.is(canceled.rows[0].status, "canceled");
  assert.equal(await statusCounts(db, b.id), { running: 2, canceled: 4 });
  assert.is(await count(db, "select 1 from graphile_worker.jobs where key = $1", [`batch-cancel:${b.id}`]), 1);
  assert.is((await batch(db, b.id)).finished_at, null);
  // What the batch_cancel job does for each running item (worker/batch-tasks.ts).
  for (const item of await running(b.id)) {
    await db.pool.query("select chat_private.operator_cancel_request($1, 'the batch was canceled')", [item.request_id]);
  }
  assert.equal(await statusCounts(db, b.id), { canceled: 6 });
  assert.ok((await batch(db, b.id)).finished_at != null);
  assert.is(await count(db, `select 1 from chat_public.structured_output_requests r join chat_public.batch_items i
    on i.structured_output_request_id = r.id where i.batch_id = $1 and r.status = 'pending'`, [b.id]), 0);
  assert.is(await count(db, "select 1 from chat_public.chats c join chat_public.batch_items i on i.chat_id = c.id where i.batch_id = $1", [b.id]), 2);
  // Cancel is idempotent; a completed batch refuses.
  await asUser(db, alice, (c) => c.query("select chat_public.cancel_batch($1)", [b.id]));
  const small = await createBatch(db, alice, lines(1));
  await validated(db, small.id);
  await endItem(db, (await items(db, small.id))[0]!.chat_id!, { code: "refused" });
  assert.is(await sqlState(asUser(db, alice, (c) => c.query("select chat_public.cancel_batch($1)", [small.id]))), "BTDON");
});

test("another user can neither see nor touch a batch; the operator sees all and can repair", async () => {
  const b = await createBatch(db, alice, lines(2), { name: "private" });
  const seen = await db.as("chat_user", bob, (c) => c.query(
    "select (select count(*) from chat_public.batches where id = $1)::int as b, (select count(*) from chat_public.batch_items where batch_id = $1)::int as i",
    [b.id]));
  assert.equal(seen.rows[0], { b: 0, i: 0 });
  assert.is(await sqlState(asUser(db, bob, (c) => c.query("select chat_public.cancel_batch($1)", [b.id]))), "BTNTF");
  const own = await db.as("chat_user", alice, (c) => c.query(
    "select (chat_public.batches_item_counts(b)).* from chat_public.batches b where id = $1", [b.id]));
  assert.equal(own.rows[0], { pending: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 });
  for (const sql of ["insert into chat_public.batches (owner_id, response_format, schema_sha256, model_config_id, total_items) select owner_id, response_format, schema_sha256, model_config_id, 1 from chat_public.batches limit 1",
    "update chat_public.batch_items set status = 'canceled'", "delete from chat_public.batches"]) {
    assert.is(await sqlState(db.as("chat_user", alice, (c) => c.query(sql))), "42501", sql);
  }
  const op = await db.as("chat_operator", null, (c) => c.query(
    "select batch_id, pending, total_items from chat_private.batch_progress where batch_id = $1", [b.id]));
  assert.equal(op.rows[0], { batch_id: b.id, pending: "2", total_items: 2 });
  assert.is(await sqlState(db.as("chat_operator", null, (c) => c.query("select * from chat_private.model_config_secrets"))), "42501");
  const created = await db.as("chat_operator", null, (c) => c.query(
    "select (chat_private.operator_create_batch($1, $2, $3)).*", [bob, envelope(), JSON.stringify(lines(1))]), true);
  assert.is(created.rows[0].status, "validating");
  const repaired = await db.as("chat_operator", null, (c) => c.query(
    "select (chat_private.operator_cancel_batch($1, 'operator: wrong input file')).status", [b.id]), true);
  assert.is(repaired.rows[0].status, "canceled");
  assert.is((await batch(db, b.id)).error, "operator: wrong input file");
});

test("the sweep re-enqueues a validation job a crashed worker left locked", async () => {
  const b = await createBatch(db, alice, lines(1));
  // A fetch by a worker that then died: Graphile Worker has no public function that locks a job, so the table.
  await db.pool.query("update graphile_worker._private_jobs set locked_at = now(), locked_by = 'dead' where key = $1", [`batch-validate:${b.id}`]);
  await db.pool.query("update chat_public.batches set updated_at = now() - interval '1 minute' where id = $1", [b.id]);
  const { rows } = await db.pool.query<{ n: number }>("select chat_private.sweep_batches() as n");
  assert.ok(rows[0]!.n >= 1);
  assert.is(await count(db, `select 1 from graphile_worker.jobs j
    where j.task_identifier = 'batch_validate' and j.locked_at is null and j.key = 'batch-validate:' || $1`, [b.id]), 1);
});

test.run();
