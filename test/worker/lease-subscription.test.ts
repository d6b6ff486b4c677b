// The chat_run job listens to its chat from before the acquire statement (which also reads the turn state), and
// hands what arrives before the run registers its handler to that run (worker/loop/lease.ts ChatSubscription).
// Real PostgreSQL NOTIFY on the worker channel through the worker's ChatListener; a second watcher is the barrier
// that shows a notification has been delivered; another chat's notifications never reach the run.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { testLogger, waitFor } from "../support/worker.ts";
import { ChatListener, WORKER_CHANNEL, type ChatNotification } from "../../worker/loop/listener.ts";
import { ChatSubscription } from "../../worker/loop/lease.ts";

let db: TestDatabase;
let listener: ChatListener;
const chatId = "00000000-0000-4000-8000-000000000001";

test.before(async () => {
  db = await createTestDatabase();
  listener = new ChatListener(db.url, testLogger);
});
test.after(async () => {
  await listener.close();
  await db.drop();
});

/** Sends a notification and returns once the listener has delivered it (seen by an independent subscriber). */
async function notifyAndDeliver(seen: ChatNotification[], payload: ChatNotification): Promise<void> {
  const before = seen.length;
  await db.pool.query("select pg_notify($1, $2)", [WORKER_CHANNEL, JSON.stringify({ chat_id: chatId, ...payload })]);
  await waitFor("the notification to be delivered", async () => seen.length > before);
}

test("a notification between the acquire and the run's handler reaches the run; older ones do not", async () => {
  const seen: ChatNotification[] = [];
  const unwatchWitness = await listener.watch(chatId, (n) => seen.push(n));
  const subscription = await ChatSubscription.open(listener, chatId);
  try {
    await notifyAndDeliver(seen, { change: "before_acquire", status: "interrupting" });
    subscription.beforeAcquire();
    // ... the acquire statement runs here; a change committed after it:
    await notifyAndDeliver(seen, { change: "after_acquire", status: "interrupting" });
    const received: ChatNotification[] = [];
    const unsubscribe = await subscription.subscribe((n) => received.push(n));
    assert.equal(received.map((n) => n.change), ["after_acquire"], "the buffered notification, and only it");
    await db.pool.query("select pg_notify($1, $2)", [WORKER_CHANNEL, JSON.stringify({ chat_id: "another", change: "elsewhere" })]);
    await notifyAndDeliver(seen, { change: "while_running" });
    assert.equal(received.map((n) => n.change), ["after_acquire", "while_running"]);
    await unsubscribe();
    await notifyAndDeliver(seen, { change: "after_run" });
    assert.is(received.length, 2, "a finished run's handler gets nothing more");
  } finally {
    subscription.close();
    unwatchWitness();
  }
});

test.run();
