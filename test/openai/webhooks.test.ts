// Completion webhooks (Standard Webhooks) end to end: a receipt's delivery row is written in the receipt's
// transaction (none for one that rolled back), the worker sends it signed so that both `standardwebhooks` and the
// official SDK's `client.webhooks.unwrap` verify it, with one webhook-id across retries; the retry schedule uses
// explicit run times, honours Retry-After, ends after the tenth attempt; 410 disables the endpoint; replay resends
// with the same id; rotation signs with both secrets.
import { createHmac } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import OpenAI from "openai";
import { Webhook } from "standardwebhooks";
import { newSecret, signedHeaders } from "../../src/webhooks/signing.ts";
import { waitFor } from "../support/worker.ts";
import { startReceiver, type Receiver } from "./receiver.ts";
import { client, finalize, startLiveStack, type LiveStack } from "./sdk.ts";

let stack: LiveStack;
let receiver: Receiver;
let sdk: OpenAI;

test.before(async () => {
  stack = await startLiveStack(["alice", "carol"]);
  receiver = await startReceiver();
  sdk = client(stack, stack.users.alice!.token);
});
test.after(async () => {
  await receiver.close();
  await stack.close();
});

async function addEndpoint(userId: string, url: string, secret = newSecret(), events: string[] | null = null): Promise<{ id: string; secret: string }> {
  const { rows } = await stack.t.db.pool.query<{ id: string }>("select chat_private.webhook_add($1, $2, $3, $4) as id",
    [userId, url, events, secret]);
  return { id: rows[0]!.id, secret };
}

async function delivery(eventId: string): Promise<{ id: string; status: string; attempts: number; next_attempt_at: Date | null }> {
  const { rows } = await stack.t.db.pool.query("select id::text, status, attempts, next_attempt_at from chat_private.webhook_deliveries where event_id = $1", [eventId]);
  return rows[0];
}

/** Makes the delivery's scheduled job due now (the schedule itself is asserted before). */
async function runNow(deliveryId: string): Promise<void> {
  await stack.t.db.pool.query(`update graphile_worker._private_jobs set run_at = now()
    where task_id = (select id from graphile_worker._private_tasks where identifier = 'webhook_deliver')
      and payload ->> 'delivery_id' = $1 and locked_at is null`, [deliveryId]);
}

/** The delivery's jobs waiting to run (the attempt that just ran stays locked until its batched completion). */
async function scheduledRunAt(deliveryId: string): Promise<Date[]> {
  const { rows } = await stack.t.db.pool.query<{ run_at: Date }>(`select j.run_at from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier = 'webhook_deliver' and j.payload ->> 'delivery_id' = $1 and j.locked_at is null`, [deliveryId]);
  return rows.map((row) => row.run_at);
}

test("signatures: a fixed vector, and both standardwebhooks and the OpenAI SDK verify what chatd signs", async () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  const body = `{"id":"evt_1","object":"event","created_at":1,"type":"response.completed","data":{"id":"resp_1"}}`;
  const headers = signedHeaders([secret], "evt_1", new Date(1_700_000_000_000), body);
  const expected = createHmac("sha256", Buffer.alloc(32, 7)).update(`evt_1.1700000000.${body}`).digest("base64");
  assert.equal(headers, { "webhook-id": "evt_1", "webhook-timestamp": "1700000000", "webhook-signature": `v1,${expected}` });
  const now = signedHeaders([secret], "evt_1", new Date(), body);
  assert.equal(new Webhook(secret).verify(body, { ...now }), JSON.parse(body));
  const unwrapped = await new OpenAI({ apiKey: "x", webhookSecret: secret }).webhooks.unwrap(body, { ...now });
  assert.is((unwrapped as { data: { id: string } }).data.id, "resp_1");
  assert.throws(() => new Webhook(secret).verify(body.replace("resp_1", "resp_2"), { ...now }));
  const stale = signedHeaders([secret], "evt_1", new Date(Date.now() - 10 * 60_000), body);
  assert.throws(() => new Webhook(secret).verify(body, { ...stale }));
});

test("a completed Response is announced once, signed, and the SDK's unwrap → retrieve recipe works", async () => {
  const endpoint = await addEndpoint(stack.users.alice!.id, receiver.url);
  try {
    const response = await sdk.responses.create({ model: "scripted", background: true, input: finalize(`"hooked"`) });
    const hook = await receiver.next();
    const event = await new OpenAI({ apiKey: "x", webhookSecret: endpoint.secret }).webhooks.unwrap(hook.body, hook.headers as Record<string, string>) as unknown as
      { id: string; object: string; type: string; data: { id: string }; created_at: number };
    assert.is(event.type, "response.completed");
    assert.is(event.object, "event");
    assert.is(event.data.id, response.id);
    assert.is(hook.headers["webhook-id"], event.id);
    assert.is(hook.headers["content-type"], "application/json");
    assert.is((await sdk.responses.retrieve(event.data.id)).output_text, "hooked");
    await waitFor("the delivery to be recorded", async () => (await delivery(event.id))?.status === "delivered");
  } finally {
    await stack.t.db.pool.query("select chat_private.webhook_remove($1)", [endpoint.id]);
  }
});

test("the delivery row is written in the receipt's transaction: none when the receipt rolls back", async () => {
  const carol = stack.users.carol!;
  const endpoint = await addEndpoint(carol.id, "http://127.0.0.1:9/unused");
  const carolSdk = client(stack, carol.token);
  try {
    const response = await carolSdk.responses.create({ model: "scripted", background: true,
      input: finalize(`"x"`, { delay_ms: 60_000 }) });
    const requestId = response.id.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
    const db = await stack.t.db.pool.connect();
    try {
      await db.query("begin");
      await db.query("select chat_private._record_receipt($1, chat_id, 'canceled', 'operator_canceled', null, null) from chat_public.structured_output_requests where id = $1", [requestId]);
      const inside = await db.query("select count(*)::int as n from chat_private.webhook_deliveries where subject_id = $1", [response.id]);
      assert.is(inside.rows[0].n, 1);
      await db.query("rollback");
    } finally {
      db.release();
    }
    const after = await stack.t.db.pool.query("select count(*)::int as n from chat_private.webhook_deliveries where subject_id = $1", [response.id]);
    assert.is(after.rows[0].n, 0);
    await carolSdk.responses.cancel(response.id);
    const cancelled = await waitFor("the cancel's delivery", async () => (await stack.t.db.pool.query(
      "select event_type from chat_private.webhook_deliveries where subject_id = $1", [response.id])).rows[0]);
    assert.is(cancelled.event_type, "response.cancelled");
  } finally {
    await stack.t.db.pool.query("select chat_private.webhook_remove($1)", [endpoint.id]);
  }
});

test("retries: same webhook-id, explicit run times on the schedule, Retry-After honoured; 410 disables", async () => {
  const endpoint = await addEndpoint(stack.users.alice!.id, receiver.url);
  try {
    receiver.answers.push({ status: 500 }, { status: 503, headers: { "retry-after": "3600" } }, { status: 200 });
    await sdk.responses.create({ model: "scripted", background: true, input: finalize(`"retry"`) });
    const first = await receiver.next();
    const eventId = String(first.headers["webhook-id"]);
    const afterFirst = await waitFor("attempt 1 recorded", async () => {
      const row = await delivery(eventId);
      return row.attempts === 1 ? row : undefined;
    });
    // Attempt 2 is due 5 s after attempt 1: a job with that run_at, not the queue's own backoff.
    const [runAt] = await scheduledRunAt(afterFirst.id);
    assert.is(runAt!.getTime(), afterFirst.next_attempt_at!.getTime());
    const delay = afterFirst.next_attempt_at!.getTime() - Date.now();
    assert.ok(delay > 3_000 && delay <= 6_000, `attempt 2 is due in ${delay} ms (5 s and up to a fifth of jitter)`);
    await runNow(afterFirst.id);
    const second = await receiver.next();
    assert.is(second.headers["webhook-id"], eventId);
    assert.is(second.body, first.body);
    // The receiver asked for an hour: more than the schedule's 5 minutes.
    const afterSecond = await waitFor("attempt 2 recorded", async () => {
      const row = await delivery(eventId);
      return row.attempts === 2 ? row : undefined;
    });
    const wait = afterSecond.next_attempt_at!.getTime() - Date.now();
    assert.ok(wait > 3_500_000 && wait <= 3_600_000, `attempt 3 is due in ${wait} ms`);
    await runNow(afterSecond.id);
    const third = await receiver.next();
    assert.is(third.headers["webhook-id"], eventId);
    await waitFor("delivered", async () => (await delivery(eventId)).status === "delivered");
    const log = await stack.t.db.pool.query("select attempt, status_code from chat_private.webhook_attempts a join chat_private.webhook_deliveries d on d.id = a.delivery_id where d.event_id = $1 order by attempt", [eventId]);
    assert.equal(log.rows, [{ attempt: 1, status_code: 500 }, { attempt: 2, status_code: 503 }, { attempt: 3, status_code: 200 }]);

    receiver.answers.push({ status: 410 });
    await sdk.responses.create({ model: "scripted", background: true, input: finalize(`"gone"`) });
    const gone = await receiver.next();
    await waitFor("the endpoint disabled", async () => (await stack.t.db.pool.query(
      "select enabled from chat_private.webhook_endpoints where id = $1", [endpoint.id])).rows[0].enabled === false);
    assert.is((await delivery(String(gone.headers["webhook-id"]))).status, "failed");
  } finally {
    await stack.t.db.pool.query("select chat_private.webhook_remove($1)", [endpoint.id]);
  }
});

test("the schedule ends at the tenth attempt (9 retries), and replay resends with the same id", async () => {
  const { rows: delays } = await stack.t.db.pool.query<{ d: string | null }>(
    "select extract(epoch from chat_private.webhook_retry_delay(n))::int::text as d from generate_series(1, 10) n order by n");
  assert.equal(delays.map((r) => r.d), ["5", "300", "1800", "7200", "18000", "36000", "50400", "72000", "86400", null]);
  const endpoint = await addEndpoint(stack.users.alice!.id, "http://127.0.0.1:9/never", newSecret(), ["batch.completed"]);
  try {
    // Out of the worker's reach: the job is removed before the delivery commits, and attempts are recorded here.
    const db = await stack.t.db.pool.connect();
    let row: { id: string; event_id: string } | undefined;
    try {
      await db.query("begin");
      await db.query("select chat_private.webhook_enqueue($1, 'batch.completed', 'batch_x', now())", [stack.users.alice!.id]);
      row = (await db.query<{ id: string; event_id: string }>(
        "select id::text, event_id from chat_private.webhook_deliveries where subject_id = 'batch_x'")).rows[0];
      await db.query("delete from graphile_worker._private_jobs where payload ->> 'delivery_id' = $1", [row!.id]);
      await db.query("commit");
    } finally {
      db.release();
    }
    const outcomes: string[] = [];
    const jitter: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { rows: [o] } = await stack.t.db.pool.query<{ o: string }>("select chat_private.webhook_record_attempt($1, 500, null, null) as o", [row!.id]);
      outcomes.push(o!.o);
      // The delay over the schedule's, read back in the same transaction as the attempt's now().
      if (i < 9) {
        const { rows: [d] } = await stack.t.db.pool.query<{ due: number }>(
          `select extract(epoch from max(d.next_attempt_at) - max(a.at))::float8 as due from chat_private.webhook_deliveries d
           join chat_private.webhook_attempts a on a.delivery_id = d.id where d.id = $1`, [row!.id]);
        jitter.push(d!.due / Number(delays[i]!.d));
      }
    }
    assert.equal(outcomes, [...Array(9).fill("retry"), "failed"]);
    // Jitter: each retry is due on the schedule or up to a fifth later, and they are not all the same.
    assert.ok(jitter.every((factor) => factor >= 1 && factor <= 1.2), jitter.join(", "));
    assert.ok(new Set(jitter.map((factor) => factor.toFixed(6))).size > 1, jitter.join(", "));
    assert.is((await delivery(row!.event_id)).status, "failed");
    await stack.t.db.pool.query("update chat_private.webhook_endpoints set url = $2 where id = $1", [endpoint.id, receiver.url]);
    await stack.t.db.pool.query("delete from graphile_worker._private_jobs where payload ->> 'delivery_id' = $1", [row!.id]);
    await stack.t.db.pool.query("select chat_private.webhook_replay($1)", [row!.id]);
    const replayed = await receiver.next();
    assert.is(replayed.headers["webhook-id"], row!.event_id);
    await waitFor("delivered on replay", async () => (await delivery(row!.event_id)).status === "delivered");
  } finally {
    await stack.t.db.pool.query("select chat_private.webhook_remove($1)", [endpoint.id]);
  }
});

test("rotation: both secrets sign while the old one is valid; after the overlap only the new one does", async () => {
  const old = newSecret();
  const endpoint = await addEndpoint(stack.users.alice!.id, receiver.url, old);
  try {
    const fresh = newSecret();
    await stack.t.db.pool.query("select chat_private.webhook_rotate($1, $2, interval '1 hour')", [endpoint.id, fresh]);
    await sdk.responses.create({ model: "scripted", background: true, input: finalize(`"rotated"`) });
    const hook = await receiver.next();
    assert.is(String(hook.headers["webhook-signature"]).split(" ").length, 2);
    new Webhook(old).verify(hook.body, hook.headers as Record<string, string>);
    new Webhook(fresh).verify(hook.body, hook.headers as Record<string, string>);
    await stack.t.db.pool.query("select chat_private.webhook_rotate($1, $2, interval '0')", [endpoint.id, newSecret()]);
    const { rows } = await stack.t.db.pool.query("select cardinality(secrets) as n from chat_private.webhook_delivery_for_send((select max(id) from chat_private.webhook_deliveries)) ");
    assert.ok(rows.length === 0 || rows[0].n === 1);
  } finally {
    await stack.t.db.pool.query("select chat_private.webhook_remove($1)", [endpoint.id]);
  }
});

test.run();
