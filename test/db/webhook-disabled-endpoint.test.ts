// A delivery is pending only while its endpoint is enabled. Disabling an endpoint (a 410 from its receiver, or an
// operator's update) fails its other pending deliveries in the same transaction; before, nothing sent them and the
// workers' sweep gave each a fresh job every minute for ever. Replay waits for the endpoint to be enabled again.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TestDatabase } from "../support/db.ts";
import { chatDatabase } from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("hooks"));
});
test.after(async () => {
  await db.drop();
});

async function endpointWithDeliveries(count: number): Promise<{ endpoint: string; deliveries: string[] }> {
  const { rows: [endpoint] } = await db.pool.query<{ id: string }>(
    "select chat_private.webhook_add($1, 'https://example.test/hook', null, $2) as id",
    [user, `whsec_${Buffer.alloc(32, 2).toString("base64")}`]);
  for (let i = 0; i < count; i += 1) {
    await db.pool.query("select chat_private.webhook_enqueue($1, 'response.completed', $2, now())", [user, `resp_${i}`]);
  }
  const { rows } = await db.pool.query<{ id: string }>(
    "select id::text from chat_private.webhook_deliveries where endpoint_id = $1 order by id", [endpoint!.id]);
  return { endpoint: endpoint!.id, deliveries: rows.map((row) => row.id) };
}

async function states(endpoint: string): Promise<{ status: string; due: boolean }[]> {
  const { rows } = await db.pool.query<{ status: string; due: boolean }>(
    `select status, next_attempt_at is not null as due from chat_private.webhook_deliveries
     where endpoint_id = $1 order by id`, [endpoint]);
  return rows;
}

const sweep = async () => (await db.pool.query<{ n: number }>("select chat_private.webhook_sweep('0 seconds') as n")).rows[0]!.n;

test("a 410 disables the endpoint and fails its other pending deliveries; the sweep finds none", async () => {
  const { endpoint, deliveries } = await endpointWithDeliveries(3);
  const { rows: [outcome] } = await db.pool.query<{ outcome: string }>(
    "select chat_private.webhook_record_attempt($1, 410, null, null) as outcome", [deliveries[0]]);
  assert.is(outcome!.outcome, "disabled");
  assert.equal(await states(endpoint), [
    { status: "failed", due: false }, { status: "failed", due: false }, { status: "failed", due: false }]);
  assert.is(await sweep(), 0);
});

test("an operator's disable fails the pending deliveries; a delivered one stays delivered; a rotation fails none", async () => {
  const { endpoint, deliveries } = await endpointWithDeliveries(2);
  await db.pool.query("select chat_private.webhook_record_attempt($1, 200, null, null)", [deliveries[0]]);
  await db.pool.query("select chat_private.webhook_rotate($1, $2, '1 hour')", [endpoint, `whsec_${Buffer.alloc(32, 3).toString("base64")}`]);
  assert.equal(await states(endpoint), [{ status: "delivered", due: false }, { status: "pending", due: true }]);
  await db.pool.query("update chat_private.webhook_endpoints set enabled = false where id = $1", [endpoint]);
  assert.equal(await states(endpoint), [{ status: "delivered", due: false }, { status: "failed", due: false }]);
});

test("replay refuses a delivery of a disabled endpoint, and sends it again once the endpoint is enabled", async () => {
  const { endpoint, deliveries } = await endpointWithDeliveries(1);
  await db.pool.query("update chat_private.webhook_endpoints set enabled = false where id = $1", [endpoint]);
  const replay = async () => (await db.pool.query<{ ok: boolean }>("select chat_private.webhook_replay($1) as ok", [deliveries[0]])).rows[0]!.ok;
  assert.is(await replay(), false);
  assert.equal(await states(endpoint), [{ status: "failed", due: false }]);
  await db.pool.query("update chat_private.webhook_endpoints set enabled = true where id = $1", [endpoint]);
  assert.is(await replay(), true);
  assert.equal(await states(endpoint), [{ status: "pending", due: true }]);
});

test.run();
