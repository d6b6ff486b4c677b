// create_chat: the state a new chat starts in and how it is enqueued, with the cost-sensitive paths pinned.
// - birth: fence current at snapshot 1, one chat_run job, no idempotency row without a key, the caller identified
//   before response_format is parsed, the fast paths of the envelope and dynamic-tool checks reporting exactly what
//   the full checks report;
// - enqueueing: the chat is born running and enqueued once (by its first turn's turn_progress insert; a chat row
//   alone enqueues nothing), the chats enqueue trigger runs only for real changes into a runnable status, the
//   receipt guard runs only for receipts, and inserts fence history from the row trigger (rolled back with a failing
//   statement; a receipt alone still leaves the fence alone, see fencing.test.ts).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, chatRowUpdates, createChat, dynamicTool, editMessage, finishTurn, structured, text,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("create-chat"));
});
test.after(async () => {
  await db.drop();
});

test("a new chat starts running at snapshot 1 with a current fence and exactly one chat_run job", async () => {
  const chat = await createChat(db, user, "hello", structured());
  const { rows } = await db.pool.query(
    `select c.status, c.snapshot_version::int, c.history_version::int, c.generation_attempt::int,
            (select count(*)::int from chat_public.chat_messages m where m.chat_id = c.id) as messages,
            (select m.revision::int from chat_public.chat_messages m where m.id = $2) as revision,
            (select count(*)::int from graphile_worker.jobs j
             where j.key = 'chat:' || c.id and j.task_identifier = 'chat_run' and j.max_attempts = 1 and j.revision = 0
               -- The public view has no payload column: the payload is read from the table.
               and (select p.payload::jsonb from graphile_worker._private_jobs p where p.id = j.id)
                   = jsonb_build_object('chat_id', c.id)) as jobs
     from chat_public.chats c where c.id = $1`, [chat.chat_id, chat.message_id]);
  assert.equal(rows[0], { status: "running", snapshot_version: 1, history_version: 1, generation_attempt: 0, messages: 1, revision: 1, jobs: 1 });
  assert.ok(chat.structured_output_request_id);
});

test("create_chat writes no chat row version after its insert: the new row's fence is current", async () => {
  const { n } = await chatRowUpdates(db, "select * from chat_public.create_chat(content => $1, response_format => $2)",
    [text("one version"), structured()], { userId: user });
  assert.is(n, 0);
});

test("create_chat without an idempotency key remembers nothing; with one it remembers the result", async () => {
  const before = (await db.pool.query("select count(*)::int as n from chat_private.idempotency_keys")).rows[0].n as number;
  await createChat(db, user, "no key");
  assert.is((await db.pool.query("select count(*)::int as n from chat_private.idempotency_keys")).rows[0].n, before);
  const first = await createChat(db, user, "keyed", null, { idempotencyKey: "cost-1" });
  assert.equal(await createChat(db, user, "keyed", null, { idempotencyKey: "cost-1" }), first);
  assert.is((await db.pool.query("select count(*)::int as n from chat_private.idempotency_keys")).rows[0].n, before + 1);
  // A key outside 1..200 characters is still refused (CIINV), and only when a key is given.
  assert.is(await sqlState(createChat(db, user, "long key", null, { idempotencyKey: "k".repeat(201) })), "CIINV");
});

test("the caller is identified before response_format is parsed (NOAUT wins over RFINV)", async () => {
  const call = (userId: string | null) => db.as("chat_user", userId, (client) =>
    client.query("select chat_public.create_chat(content => $1, response_format => $2)", [text("x"), "{not json"]));
  assert.is(await sqlState(call(null)), "NOAUT");
  assert.is(await sqlState(call(user)), "RFINV");
});

test("unknown envelope fields are reported in key order, top level first", async () => {
  const { rows } = await db.pool.query("select field, detail from chat_private.response_format_errors($1::jsonb)", [JSON.stringify(
    { z: 1, type: "json_schema", a: 2, json_schema: { q: 1, name: "r", b: 2, schema: {} } })]);
  assert.equal(rows, [
    { field: "response_format.a", detail: "is not a known field" },
    { field: "response_format.z", detail: "is not a known field" },
    { field: "response_format.json_schema.b", detail: "is not a known field" },
    { field: "response_format.json_schema.q", detail: "is not a known field" },
  ]);
  const clean = await db.pool.query("select * from chat_private.response_format_errors($1::jsonb)", [structured()]);
  assert.equal(clean.rows, []);
});

test("dynamic tools: an empty list passes, every rule still applies to a non-empty one", async () => {
  const check = (tools: unknown) => db.pool.query("select chat_private.check_dynamic_tools($1::jsonb)", [JSON.stringify(tools)]);
  await check([]);
  await check([dynamicTool("a"), dynamicTool("b")]);
  const column = (tools: unknown) => check(tools).then(() => undefined, (error: { code?: string; column?: string }) => `${error.code} ${error.column}`);
  assert.is(await column({}), "CIINV dynamic_tools");
  assert.is(await column([dynamicTool("a"), { name: "bad name", input_schema: {} }]), "CIINV dynamic_tools[1].name");
  assert.is(await column([dynamicTool("a"), dynamicTool("a")]), "CIINV dynamic_tools");
  assert.is(await column([{ ...dynamicTool("a"), extra: true }]), "CIINV dynamic_tools[0]");
});

/** The chat_run jobs of a chat as [revision], in id order. */
async function jobs(client: pg.Pool | pg.PoolClient, chatId: string): Promise<number[]> {
  const { rows } = await client.query<{ revision: number }>(
    `select j.revision from graphile_worker.jobs j
     where j.key = 'chat:' || $1::text and j.task_identifier = 'chat_run' order by j.id`, [chatId]);
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
    await client.query("select graphile_worker.remove_job('chat:' || $1::text)", [chat.chat_id]);
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
  await db.pool.query("select graphile_worker.remove_job('chat:' || $1::text)", [chat.chat_id]);
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
