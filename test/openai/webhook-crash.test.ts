// A worker process killed with a real SIGKILL after a receipt commits (it holds at the fault point
// after_receipt_commit:hang; the committed receipt is the barrier): the delivery row committed with the receipt, so
// a surviving worker sends the webhook, and every request the receiver sees carries the one event id. A job the dead
// worker had taken is recovered by the webhook sweep.
import { test } from "uvu";
import * as assert from "uvu/assert";
import OpenAI from "openai";
import { newSecret } from "../../src/webhooks/signing.ts";
import { startTestApi, type TestApi } from "../api/harness.ts";
import { fastSettings, makeWorkspaces, spawnWorkerProcess, waitFor } from "../support/worker.ts";
import { startReceiver, type Receiver } from "./receiver.ts";
import { finalize } from "./sdk.ts";

let t: TestApi;
let receiver: Receiver;
let root: string;

test.before(async () => {
  t = await startTestApi();
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  await fastSettings(t.db);
  root = await makeWorkspaces();
  receiver = await startReceiver();
});
test.after(async () => {
  await receiver.close();
  await t.close();
});

test("SIGKILLed after the receipt commit: the webhook still arrives, always with the same webhook-id", async () => {
  const user = await t.user("erin");
  const secret = newSecret();
  await t.db.pool.query("select chat_private.webhook_add($1, $2, null, $3)", [user.id, receiver.url, secret]);
  const sdk = new OpenAI({ baseURL: `${t.api.url}/v1`, apiKey: user.token, maxRetries: 0, webhookSecret: secret });
  const response = await sdk.responses.create({ model: "scripted", background: true, input: finalize(`"survives"`) });
  const doomed = spawnWorkerProcess(t.db, root, { CHATD_FAULTS: "after_receipt_commit:hang" });
  await waitFor("the receipt to commit", async () => (await sdk.responses.retrieve(response.id)).status === "completed");
  doomed.kill("SIGKILL");
  await doomed.exited;
  assert.is(doomed.signalCode, "SIGKILL");
  const { rows } = await t.db.pool.query<{ event_id: string }>(
    "select event_id from chat_private.webhook_deliveries where subject_id = $1", [response.id]);
  assert.is(rows.length, 1, "one delivery, committed with the receipt");
  // The dead worker may have taken the delivery's job (its lock lasts hours): the sweep, overdue by 0 s here
  // (1 minute in the worker's own sweep), gives the delivery a fresh job.
  await t.db.pool.query("select chat_private.webhook_sweep('0 seconds')");
  const survivor = spawnWorkerProcess(t.db, root);
  try {
    const hook = await receiver.next();
    const event = await sdk.webhooks.unwrap(hook.body, hook.headers as Record<string, string>) as unknown as { id: string; data: { id: string } };
    assert.is(event.data.id, response.id);
    await waitFor("the delivery recorded", async () => (await t.db.pool.query(
      "select status from chat_private.webhook_deliveries where event_id = $1", [rows[0]!.event_id])).rows[0].status === "delivered");
    assert.equal([...new Set(receiver.received.map((r) => r.headers["webhook-id"]))], [rows[0]!.event_id]);
  } finally {
    survivor.kill("SIGTERM");
    await survivor.exited;
  }
});

test.run();
