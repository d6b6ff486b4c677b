// Pins the second round of the cheaper create_chat: the chat is born running and enqueued once (by its first
// turn's turn_progress insert; a chat row alone enqueues nothing), the chats enqueue trigger runs only for real
// changes into a runnable status, the receipt guard runs only for receipts, and inserts fence history from the row
// trigger (rolled back with a failing statement; a receipt alone still leaves the fence alone, see fencing.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { acquire, createChat, createUser, editMessage, finishTurn, setStructuredExperiment, structured, text } from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "cost2");
  await setStructuredExperiment(db, true);
});
test.after(async () => {
  await db.drop();
});

/** The chat_run jobs of a chat as [revision], in id order. */
async function jobs(client: pg.Pool | pg.PoolClient, chatId: string): Promise<number[]> {
  const { rows } = await client.query<{ revision: number }>(
    `select j.revision from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
     where j.key = 'chat:' || $1::text and t.identifier = 'chat_run' order by j.id`, [chatId]);
  return rows.map((row) => row.revision);
}

async function rolledBack<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query("begin");
    return await fn(client);
  } finally {
    await client.query("rollback").catch(() => {});
    client.release();
  }
}

test("two chats created in one transaction are each enqueued exactly once (no replaced job)", async () => {
  const ids = await db.as("chat_user", user, async (client) => {
    const created: string[] = [];
    for (const content of ["one", "two"]) {
      const { rows } = await client.query("select chat_id from chat_public.create_chat(content => $1, response_format => $2)",
        [text(content), structured()]);
      created.push(rows[0].chat_id as string);
    }
    return created;
  }, true);
  for (const id of ids) {
    assert.equal(await jobs(db.pool, id), [0]);
    const { rows } = await db.pool.query("select status::text, snapshot_version::int from chat_public.chats where id = $1", [id]);
    assert.equal(rows[0], { status: "running", snapshot_version: 1 });
  }
});

test("a chat row alone enqueues nothing; starting its turn does, once", async () => {
  await rolledBack(async (client) => {
    const { rows } = await client.query(
      "insert into chat_public.chats (owner_id, model_config_id, status) values ($1, 'scripted', 'running') returning id", [user]);
    const chatId = rows[0].id as string;
    assert.equal(await jobs(client, chatId), []);
    const message = await client.query(
      "insert into chat_public.chat_messages (chat_id, role, visibility, kind, content) values ($1, 'user', 'both', 'message', '[]') returning id",
      [chatId]);
    await client.query("insert into chat_private.turn_progress (chat_id, input_message_id) values ($1, $2)", [chatId, message.rows[0].id]);
    assert.equal(await jobs(client, chatId), [0]);
  });
});

test("the chats trigger enqueues on a change into running or interrupting, not on a status set to itself", async () => {
  const chat = await createChat(db, user, "first");
  await finishTurn(db, await acquire(db, chat.chat_id));
  await rolledBack(async (client) => {
    await client.query("delete from graphile_worker._private_jobs where key = 'chat:' || $1::text", [chat.chat_id]);
    await client.query("update chat_public.chats set status = 'waiting' where id = $1", [chat.chat_id]);
    assert.equal(await jobs(client, chat.chat_id), []);
    await client.query("update chat_public.chats set status = 'running' where id = $1", [chat.chat_id]);
    assert.equal(await jobs(client, chat.chat_id), [0]);
    await client.query("update chat_public.chats set status = 'running' where id = $1", [chat.chat_id]);
    assert.equal(await jobs(client, chat.chat_id), [0]);
    await client.query("update chat_public.chats set status = 'interrupting' where id = $1", [chat.chat_id]);
    assert.equal(await jobs(client, chat.chat_id), [1]);
  });
});

test("a new turn on an idle chat is enqueued as before (status change, then the turn_progress insert)", async () => {
  const chat = await createChat(db, user, "to edit");
  await finishTurn(db, await acquire(db, chat.chat_id));
  await db.pool.query("delete from graphile_worker._private_jobs where key = 'chat:' || $1::text", [chat.chat_id]);
  await editMessage(db, user, chat.message_id!, "edited");
  assert.equal(await jobs(db.pool, chat.chat_id), [1]);
});

test("an insert that fails leaves the fence as it was; ordinary rows are not checked by the receipt guard", async () => {
  const chat = await createChat(db, user, "fenced");
  const fence = await acquire(db, chat.chat_id);
  await rolledBack(async (client) => {
    const read = async () => (await client.query(
      "select history_version::int, snapshot_version::int, generation_attempt::int from chat_public.chats where id = $1",
      [chat.chat_id])).rows[0];
    const before = await read();
    assert.is(before.generation_attempt, 1);
    await client.query("savepoint s");
    assert.is(await sqlState(client.query(
      `insert into chat_public.chat_messages (chat_id, role, kind, content, structured_output)
       values ($1, 'assistant', 'message', '[]', '{}')`, [chat.chat_id])), "23514");
    await client.query("rollback to savepoint s");
    assert.equal(await read(), before);
    const { rows } = await client.query(
      "insert into chat_public.chat_messages (chat_id, role, content) values ($1, 'assistant', '[]') returning id, revision::int",
      [chat.chat_id]);
    assert.is(rows[0].revision, before.snapshot_version);
    assert.equal(await read(), { ...before, history_version: before.snapshot_version, generation_attempt: 0 });
    await client.query("update chat_public.chat_messages set content = '[{\"type\":\"text\",\"text\":\"x\"}]' where id = $1", [rows[0].id]);
    assert.is(await sqlState(client.query("update chat_public.chat_messages set kind = 'receipt', structured_output = '{}' where id = $1",
      [rows[0].id])), "RCFRB");
  });
  assert.ok(fence.runnerId);
});

test.run();
