// The runner fence (chat, runner_id, history_version, generation_attempt) and the lease, across two connections.
// Concurrency uses locks as barriers (an open transaction holds the chat row; the other connection is observed
// waiting on it in pg_stat_activity) — never sleeps.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import {
  acquire, assistantText, blockedOnLock as waitForLock, chatRow, commitStep, Connections, count, createChat, createUser, editMessage,
  expireLease, type Fence, sendMessage, setStructuredExperiment, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "lease");
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});

const connection = () => connections.open(db);

const blockedOnLock = (pid: number) => waitForLock(db, pid);

const messageCount = (chatId: string) => count(db, "select 1 from chat_public.chat_messages where chat_id = $1", [chatId]);
const renew = async (fence: Fence, client: pg.ClientBase | pg.Pool = db.pool) =>
  (await client.query<{ ok: boolean }>("select chat_private.renew_lease($1, $2) as ok", [fence.chatId, fence.runnerId])).rows[0]!.ok;

test("a stale fence writes nothing and raises CHFNC", async () => {
  const chat = await createChat(db, user, "go");
  const first = await acquire(db, chat.chat_id);
  const second = await commitStep(db, first, [assistantText("one")], { steps: 1 });
  assert.is.not(second.historyVersion, first.historyVersion, "a history insert moves history_version");
  assert.is(second.generationAttempt, "0");
  const before = await messageCount(chat.chat_id);
  const snapshot = (await chatRow(db, chat.chat_id)).snapshot_version;
  assert.is(await sqlState(commitStep(db, first, [assistantText("stale")])), "CHFNC");
  // Each fence component on its own is checked.
  assert.is(await sqlState(commitStep(db, { ...second, generationAttempt: "1" }, [assistantText("x")])), "CHFNC");
  assert.is(await sqlState(commitStep(db, { ...second, runnerId: "00000000-0000-4000-8000-000000000000" }, [assistantText("x")])), "CHFNC");
  assert.is(await messageCount(chat.chat_id), before);
  assert.is((await chatRow(db, chat.chat_id)).snapshot_version, snapshot, "a refused transition bumps nothing");
  await commitStep(db, second, [assistantText("current")]);
  assert.is(await messageCount(chat.chat_id), before + 1);
});

test("a client edit fences the runner out: its next write raises CHFNC and writes nothing", async () => {
  const chat = await createChat(db, user, "original");
  const fence = await acquire(db, chat.chat_id);
  await editMessage(db, user, chat.message_id!, "edited");
  const before = await messageCount(chat.chat_id);
  assert.is(await sqlState(commitStep(db, fence, [assistantText("from the old history")])), "CHFNC");
  assert.is(await messageCount(chat.chat_id), before);
});

test("lease expiry lets a second runner acquire; the first runner's next write raises CHFNC", async () => {
  const chat = await createChat(db, user, "crashy");
  const a = await acquire(db, chat.chat_id, "worker-a");
  await expireLease(db, chat.chat_id);
  // Even before anyone else acquires, an expired lease no longer fences in.
  assert.is(await sqlState(commitStep(db, a, [assistantText("late")])), "CHFNC");
  const { client } = await connection();
  const b = await acquire(db, chat.chat_id, "worker-b", client);
  assert.is.not(b.runnerId, a.runnerId);
  assert.is(Number(b.generationAttempt), Number(a.generationAttempt) + 1);
  const before = await messageCount(chat.chat_id);
  assert.is(await sqlState(commitStep(db, a, [assistantText("stale runner")])), "CHFNC");
  assert.is(await messageCount(chat.chat_id), before);
  await commitStep(db, b, [assistantText("new runner")], {}, client);
  assert.is(await messageCount(chat.chat_id), before + 1);
});

test("acquiring while a live lease exists raises CHLSD", async () => {
  const chat = await createChat(db, user, "busy");
  const a = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  assert.is(await sqlState(acquire(db, chat.chat_id, "other")), "CHLSD");
  const after = await chatRow(db, chat.chat_id);
  assert.is(after.generation_attempt, before.generation_attempt);
  assert.is(after.snapshot_version, before.snapshot_version);
  await commitStep(db, a, [assistantText("still mine")]);
});

test("renew_lease is true for the current runner and false for a stale one; it is not a transition", async () => {
  const chat = await createChat(db, user, "heartbeat");
  const a = await acquire(db, chat.chat_id, "worker-a");
  const before = await chatRow(db, chat.chat_id);
  assert.is(await renew(a), true);
  assert.is((await chatRow(db, chat.chat_id)).snapshot_version, before.snapshot_version, "a heartbeat bumps no version");
  await expireLease(db, chat.chat_id);
  const b = await acquire(db, chat.chat_id, "worker-b");
  assert.is(await renew(a), false);
  assert.is(await renew(b), true);
  assert.is(await sqlState(commitStep(db, a, [assistantText("x")])), "CHFNC");
});

test("two concurrent acquire_lease calls: exactly one wins, the other raises CHLSD", async () => {
  const chat = await createChat(db, user, "race");
  const first = await connection();
  const second = await connection();
  await first.client.query("begin");
  const won = await acquire(db, chat.chat_id, "first", first.client);
  // The second call blocks on the chat row lock held by the open transaction.
  const racing = sqlState(acquire(db, chat.chat_id, "second", second.client));
  await blockedOnLock(second.pid);
  await first.client.query("commit");
  assert.is(await racing, "CHLSD");
  const { rows } = await db.pool.query("select runner_id, worker_id from chat_private.chat_leases where chat_id = $1", [chat.chat_id]);
  assert.equal(rows, [{ runner_id: won.runnerId, worker_id: "first" }]);
  assert.is(String((await chatRow(db, chat.chat_id)).generation_attempt), "1");
});

test("a runner blocked behind an uncommitted client edit raises CHFNC once the edit commits", async () => {
  const chat = await createChat(db, user, "before edit");
  const fence = await acquire(db, chat.chat_id);
  const editor = await connection();
  const runner = await connection();
  await editor.client.query("begin");
  await editor.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  await editor.client.query("select * from chat_public.edit_chat_message($1, $2)",
    [chat.message_id, JSON.stringify([{ type: "text", text: "after edit" }])]);
  const committing = sqlState(commitStep(db, fence, [assistantText("racing the edit")], {}, runner.client));
  await blockedOnLock(runner.pid);
  await editor.client.query("commit");
  assert.is(await committing, "CHFNC");
  assert.is(await count(db, "select 1 from chat_public.chat_messages where chat_id = $1 and role = 'assistant'", [chat.chat_id]), 0);
});

test("a client edit blocked behind a runner's open commit_step fences it out afterwards", async () => {
  const chat = await createChat(db, user, "runner first");
  const fence = await acquire(db, chat.chat_id);
  const runner = await connection();
  const editor = await connection();
  await runner.client.query("begin");
  const next = await commitStep(db, fence, [assistantText("committed step")], {}, runner.client);
  await editor.client.query("begin");
  await editor.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  const editing = editor.client.query("select * from chat_public.edit_chat_message($1, $2)",
    [chat.message_id, JSON.stringify([{ type: "text", text: "edited" }])]);
  await blockedOnLock(editor.pid);
  await runner.client.query("commit");
  await editing;
  await editor.client.query("commit");
  // The step committed before the edit; the edit discarded it and the runner's new fence is stale.
  const { rows } = await db.pool.query<{ deleted: boolean }>(
    "select deleted from chat_public.chat_messages where chat_id = $1 and role = 'assistant'", [chat.chat_id]);
  assert.equal(rows, [{ deleted: true }]);
  assert.is(await sqlState(commitStep(db, next, [assistantText("after the edit")])), "CHFNC");
});

test("a queue deletion that waited behind a runner's open commit_step leaves the runner's new fence valid", async () => {
  await setStructuredExperiment(db, true);
  const chat = await createChat(db, user, "busy runner");
  const fence = await acquire(db, chat.chat_id);
  const queued = await sendMessage(db, user, chat.chat_id, "queued structured", structured());
  const runner = await connection();
  const client = await connection();
  await runner.client.query("begin");
  const next = await commitStep(db, fence, [assistantText("step in flight")], {}, runner.client);
  await client.client.query("begin");
  await client.client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  const deleting = client.client.query("select * from chat_public.delete_queued_message($1)", [queued.queued_message_id]);
  await blockedOnLock(client.pid);
  await runner.client.query("commit");
  await deleting;
  await client.client.query("commit");
  const { rows } = await db.pool.query("select structured_output ->> 'status' as status from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'",
    [chat.chat_id]);
  assert.equal(rows, [{ status: "canceled" }]);
  // The receipt committed after the runner's step: the fence that step returned still holds.
  await commitStep(db, next, [assistantText("next step")]);
});

test.run();
