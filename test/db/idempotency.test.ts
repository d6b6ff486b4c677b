// Idempotency keys on create and send: a repeat returns the first result and creates
// nothing, a key is bound to one operation (IDKEY), and a concurrent repeat waits for the first call's commit.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, count, createChat, createUser, finishTurn, type InputResult, sendMessage, structured, text,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;
const clients: pg.Client[] = [];

test.before(async () => {
  ({ db, user } = await chatDatabase("batch"));
});
test.after(async () => {
  for (const client of clients) await client.end().catch(() => {});
  await db.drop();
});

async function totals() {
  const { rows } = await db.pool.query(
    `select (select count(*) from chat_public.chats)::int as chats, (select count(*) from chat_public.chat_messages)::int as messages,
            (select count(*) from chat_public.chat_queued_messages)::int as queued,
            (select count(*) from chat_public.structured_output_requests)::int as requests,
            (select count(*) from chat_private.turn_progress)::int as turns`);
  return rows[0];
}

test("a repeated create with the same key returns the first result and creates nothing", async () => {
  const first = await createChat(db, user, "batch item 1", structured(), { idempotencyKey: "create-1" });
  const before = await totals();
  const again = await createChat(db, user, "batch item 1", structured(), { idempotencyKey: "create-1" });
  assert.equal(again, first);
  assert.equal(await totals(), before);
  // Without a key, the same call creates a second chat.
  await createChat(db, user, "batch item 1", structured());
  assert.is((await totals()).chats, before.chats + 1);
});

test("a repeated send with the same key returns the first result and creates nothing", async () => {
  const chat = await createChat(db, user, "running");
  await acquire(db, chat.chat_id);
  const first = await sendMessage(db, user, chat.chat_id, "queued once", structured(), "queue", "send-1");
  assert.ok(first.queued_message_id);
  const before = await totals();
  const snapshot = await db.pool.query("select snapshot_version from chat_public.chats where id = $1", [chat.chat_id]);
  const again = await sendMessage(db, user, chat.chat_id, "queued once", structured(), "queue", "send-1");
  assert.equal(again, first);
  assert.equal(await totals(), before);
  assert.equal((await db.pool.query("select snapshot_version from chat_public.chats where id = $1", [chat.chat_id])).rows, snapshot.rows);
});

test("the same key for a different operation raises IDKEY", async () => {
  const chat = await createChat(db, user, "keyed", null, { idempotencyKey: "shared-key" });
  const before = await totals();
  assert.is(await sqlState(sendMessage(db, user, chat.chat_id, "reuse", null, "queue", "shared-key")), "IDKEY");
  assert.equal(await totals(), before);
  await sendMessage(db, user, chat.chat_id, "keyed send", null, "queue", "send-key");
  assert.is(await sqlState(createChat(db, user, "reuse", null, { idempotencyKey: "send-key" })), "IDKEY");
});

test("keys are scoped per user", async () => {
  const other = await createUser(db, "other-batch");
  const mine = await createChat(db, user, "mine", null, { idempotencyKey: "per-user" });
  const theirs = await createChat(db, other, "theirs", null, { idempotencyKey: "per-user" });
  assert.is.not(theirs.chat_id, mine.chat_id);
});

test("an invalid key is refused (CIINV)", async () => {
  assert.is(await sqlState(createChat(db, user, "x", null, { idempotencyKey: "" })), "CIINV");
  assert.is(await sqlState(createChat(db, user, "x", null, { idempotencyKey: "k".repeat(201) })), "CIINV");
});

async function userConnection(): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  clients.push(client);
  const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
  await client.query("begin");
  await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
  return { client, pid: rows[0]!.pid };
}

test("two concurrent sends with the same key: one chat message, both get the same result", async () => {
  const chat = await createChat(db, user, "idle soon");
  await finishTurn(db, await acquire(db, chat.chat_id));
  const a = await userConnection();
  const b = await userConnection();
  const send = (client: pg.Client) => client.query<InputResult>("select * from chat_public.send_chat_message($1, $2, null, 'queue', 'race-key')",
    [chat.chat_id, text("exactly once")]).then((r) => r.rows[0]!);
  const first = await send(a.client);
  const second = send(b.client);
  // Barrier: b waits on the advisory lock that idempotent_result takes for (user, key).
  let waiting = false;
  for (let i = 0; i < 20_000 && !waiting; i++) {
    const { rows } = await db.pool.query(
      "select 1 from pg_locks where pid = $1 and locktype = 'advisory' and not granted", [b.pid]);
    waiting = rows.length > 0;
  }
  assert.ok(waiting, "the second send waits for the first");
  await a.client.query("commit");
  const result = await second;
  await b.client.query("commit");
  assert.equal(result, first);
  assert.ok(first.message_id, "the idle chat started a turn");
  assert.is(await count(db, "select 1 from chat_public.chat_messages where chat_id = $1 and content -> 0 ->> 'text' = 'exactly once'",
    [chat.chat_id]), 1);
  assert.is(await count(db, "select 1 from chat_public.chat_queued_messages where chat_id = $1", [chat.chat_id]), 0);
});

test.run();
