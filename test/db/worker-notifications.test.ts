// Notifications the worker relies on. A step's last part deltas ride with its commit (commit_step's p_deltas,
// worker/loop/transitions.ts): published on the chat's parts channel in the commit's transaction, in order, before
// the step's own notification; a runner whose fence is lost publishes nothing. What a running step must hear at
// once (an interrupt, an edit) also goes to `chatd:worker`, the channel every worker listens to; the hot path's
// notifications do not. Real PostgreSQL LISTEN on a second connection.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { acquire, assistantText, createChat, createUser, editMessage, interrupt, type Fence } from "../support/chats.ts";

let db: TestDatabase;
let user: string;
let listener: pg.Client;
const heard: { channel: string; payload: string }[] = [];

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "step-deltas");
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on("notification", (n) => heard.push({ channel: n.channel, payload: n.payload ?? "" }));
  await listener.query('listen "chatd:worker"');
});
test.after(async () => {
  await listener.end();
  await db.drop();
});

function commitWithDeltas(fence: Fence, deltas: string[] | null): Promise<unknown> {
  return db.pool.query("select * from chat_private.commit_step($1, $2, $3, $4, $5, '{}', $6)",
    [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt, JSON.stringify([assistantText("done")]), deltas]);
}

/** Waits until the listener has heard the marker notification sent after the statement under test (a barrier). */
async function drain(): Promise<{ channel: string; payload: string }[]> {
  const marker = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the marker notification did not arrive within 10 s")), 10_000);
    const onNotification = (n: pg.Notification) => {
      if (n.payload !== "marker") return;
      clearTimeout(timer);
      listener.off("notification", onNotification);
      resolve();
    };
    listener.on("notification", onNotification);
  });
  await db.pool.query("select pg_notify('chatd:worker', 'marker')");
  await marker;
  const got = heard.splice(0);
  assert.ok(got.some((h) => h.payload === "marker"), "the marker arrived");
  return got.filter((h) => h.payload !== "marker");
}

test("deltas are published in order, before the step's notification, in the commit's transaction", async () => {
  const chat = await createChat(db, user, "deltas");
  await listener.query(`listen "chatd:chat:${chat.chat_id}"; listen "chatd:chat:${chat.chat_id}:parts"`);
  const fence = await acquire(db, chat.chat_id);
  await drain();
  await commitWithDeltas(fence, ['{"seq":1}', '{"seq":2}', '{"seq":3}']);
  const got = await drain();
  assert.equal(got.map((h) => h.channel.endsWith(":parts") ? h.payload : JSON.parse(h.payload).change),
    ['{"seq":1}', '{"seq":2}', '{"seq":3}', "step"]);
  assert.ok(got.every((h) => h.channel !== "chatd:worker"), "a step is not sent to the worker channel");
});

test("a commit refused for a lost fence publishes none of its deltas", async () => {
  const chat = await createChat(db, user, "stale deltas");
  await listener.query(`listen "chatd:chat:${chat.chat_id}"; listen "chatd:chat:${chat.chat_id}:parts"`);
  const fence = await acquire(db, chat.chat_id);
  await commitWithDeltas(fence, null);
  await drain();
  assert.is(await sqlState(commitWithDeltas(fence, ['{"seq":9}'])), "CHFNC", "the old fence no longer holds");
  assert.equal(await drain(), []);
});

test("an interrupt and an edit reach chatd:worker with the chat id; creating and acquiring do not", async () => {
  const chat = await createChat(db, user, "watched");
  await acquire(db, chat.chat_id);
  assert.equal((await drain()).filter((h) => h.channel === "chatd:worker"), [], "created, attempt: not for the worker");
  await interrupt(db, user, chat.chat_id);
  const interrupted = (await drain()).filter((h) => h.channel === "chatd:worker").map((h) => JSON.parse(h.payload));
  assert.equal(interrupted.map((n) => [n.chat_id, n.status]), [[chat.chat_id, "interrupting"]]);

  const edited = await createChat(db, user, "to be edited");
  await drain();
  await editMessage(db, user, String(edited.message_id), "edited");
  const reset = (await drain()).filter((h) => h.channel === "chatd:worker").map((h) => JSON.parse(h.payload));
  assert.equal(reset.map((n) => [n.chat_id, n.change]), [[edited.chat_id, "history_reset"]]);
});

test.run();
