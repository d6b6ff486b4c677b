// Batch events in real PostgreSQL: a batch's terminal update writes one delivery per endpoint that wants its event,
// in the same transaction: completed → batch.completed, failed → batch.failed, canceled (the owner's cancel_batch)
// → batch.cancelled, each with OpenAI's thin body naming `batch_<hex>`. An endpoint that did not ask for batch
// events, and a change that is not terminal (validating → running), write none.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { newSecret } from "../../src/webhooks/signing.ts";
import { asUser, createUser } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
let owner: string;

test.before(async () => {
  db = await createTestDatabase();
  owner = await createUser(db, "batcher");
  await db.pool.query("select chat_private.webhook_add($1, 'https://hooks.example.com/batches', $2, $3)",
    [owner, ["batch.completed", "batch.failed", "batch.cancelled"], newSecret()]);
  await db.pool.query("select chat_private.webhook_add($1, 'https://hooks.example.com/responses', null, $2)", [owner, newSecret()]);
});
test.after(() => db.drop());

async function batch(status: "validating" | "running"): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    `insert into chat_public.batches (owner_id, response_format, schema_sha256, model_config_id, status, total_items)
     values ($1, '{"name": "n", "schema": {"type": "string"}}', repeat('0', 64), 'scripted', $2, 1) returning id`, [owner, status]);
  return rows[0]!.id;
}

async function deliveries(batchId: string): Promise<{ url: string; event_type: string; body: Record<string, unknown> }[]> {
  const { rows } = await db.pool.query(
    `select e.url, d.event_type, d.body::jsonb as body from chat_private.webhook_deliveries d
     join chat_private.webhook_endpoints e on e.id = d.endpoint_id where d.subject_id = $1 order by d.id`,
    [`batch_${batchId.replaceAll("-", "")}`]);
  return rows;
}

test("completed, failed and canceled batches announce batch.completed, batch.failed and batch.cancelled", async () => {
  const completed = await batch("running");
  const failed = await batch("validating");
  const canceled = await batch("running");
  await db.pool.query("update chat_public.batches set status = 'completed', finished_at = now() where id = $1", [completed]);
  await db.pool.query("update chat_public.batches set status = 'failed', finished_at = now(), error = 'bad lines' where id = $1", [failed]);
  await asUser(db, owner, (client) => client.query("select chat_public.cancel_batch($1)", [canceled]));
  for (const [id, type] of [[completed, "batch.completed"], [failed, "batch.failed"], [canceled, "batch.cancelled"]] as const) {
    const rows = await deliveries(id);
    assert.equal(rows.map((r) => [r.url, r.event_type]), [["https://hooks.example.com/batches", type]], type);
    const body = rows[0]!.body;
    assert.equal([body.object, body.type, body.data], ["event", type, { id: `batch_${id.replaceAll("-", "")}` }]);
  }
});

test("a change that is not terminal announces nothing", async () => {
  const id = await batch("validating");
  await db.pool.query("update chat_public.batches set status = 'running', started_at = now() where id = $1", [id]);
  assert.equal(await deliveries(id), []);
});

test.run();
