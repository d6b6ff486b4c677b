// The idempotency-key boundary: keys chatd mints (batch:<batch>:<line>, agent:<parent>:<call>) are refused for
// clients, a batch item never adopts a chat that does not carry the batch's schema, and a key reused with another
// request is refused (IDKEY) instead of replaying the first result.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { asUser, createUser, setStructuredExperiment, structured, text } from "../support/chats.ts";
import { createBatch, envelope, items, lines, validated } from "../batch/helpers.ts";

let db: TestDatabase;
let owner: string;

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  owner = await createUser(db, "owner");
});
test.after(async () => {
  await db.drop();
});

const createWithKey = (key: string, content = "hello", format: string | null = null) => asUser(db, owner, (client) =>
  client.query("select * from chat_public.create_chat(content => $1, response_format => $2, idempotency_key => $3)",
    [text(content), format, key]));

const sendWithKey = (chatId: string, key: string, content = "more") => asUser(db, owner, (client) =>
  client.query("select * from chat_public.send_chat_message($1, $2, null, 'queue', $3)", [chatId, text(content), key]));

/** The error's SQLSTATE and column, or "ok". */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    const { code, column } = error as { code?: string; column?: string };
    if (!code) throw error;
    return column ? `${code} ${column}` : code;
  }
}

test("client keys: reserved prefixes refused (CIINV idempotency_key), look-alikes allowed", async () => {
  const batchId = "6a1f5f7e-0000-4000-8000-000000000001";
  const rows: [string, string][] = [
    [`batch:${batchId}:1`, "CIINV idempotency_key"],
    ["batch:", "CIINV idempotency_key"],
    ["agent:some-parent:call_1", "CIINV idempotency_key"],
    ["my-batch:1", "ok"],
    ["Batch:1", "ok"],
    ["agents:1", "ok"],
    [" batch:1", "ok"],
  ];
  for (const [key, expected] of rows) assert.is(await outcome(createWithKey(key)), expected, `create_chat ${key}`);
  const { rows: [chat] } = await createWithKey("for-send");
  for (const [key, expected] of rows) {
    assert.is(await outcome(sendWithKey(chat.chat_id, `${key}:send`)), expected, `send_chat_message ${key}:send`);
  }
});

/** A chat in the owner's key space under a batch item's key, as a client could create before the prefix was refused. */
async function plant(key: string, format: string | null): Promise<string> {
  const { rows } = await db.pool.query<{ chat_id: string }>(
    `select (chat_private.create_chat_as($1, $2, chat_private.parse_response_format($3), null, 'planted', null, '[]',
       false, $4)).chat_id`, [owner, text("planted"), format, key]);
  return rows[0]!.chat_id;
}

test("a batch item never adopts a planted chat: another schema or none fails the item dispatch_failed", async () => {
  const b = await createBatch(db, owner, lines(3), { format: envelope({ type: "object", required: ["answer"] }) });
  const otherSchema = await plant(`batch:${b.id}:1`, structured("other", { type: "string" }));
  const noSchema = await plant(`batch:${b.id}:2`, null);
  assert.is(await validated(db, b.id), "running");
  const [first, second, third] = await items(db, b.id);
  for (const item of [first!, second!]) {
    assert.is(item.status, "failed", `line ${item.line}`);
    assert.is(item.error_code, "dispatch_failed");
    assert.is(item.chat_id, null, "nothing adopted");
    assert.is(item.request_id, null);
  }
  assert.is(third!.status, "running", "the other items run as usual");
  const planted = await db.pool.query("select 1 from chat_public.batch_items where chat_id = any ($1)", [[otherSchema, noSchema]]);
  assert.is(planted.rowCount, 0);
});

test("a replayed item creation (the same batch, the same key) is still adopted", async () => {
  const b = await createBatch(db, owner, lines(1));
  assert.is(await validated(db, b.id), "running");
  const [item] = await items(db, b.id);
  // What a dispatcher re-running after a crash does: the same creation under the same key returns the same chat.
  const { rows } = await db.pool.query<{ chat_id: string }>(
    `select (chat_private.create_chat_as(b.owner_id, $2, b.response_format, b.model_config_id,
       left(coalesce(b.name, 'batch') || ' #1', 200), b.workspace, '[]', false, 'batch:' || b.id || ':1', false)).chat_id
     from chat_public.batches b where b.id = $1`,
    [b.id, JSON.stringify(lines(1)[0]!.content)]);
  assert.is(rows[0]!.chat_id, item!.chat_id);
});

test("a key reused with another request is refused (IDKEY); the same request replays", async () => {
  const format = structured("report", { type: "object" });
  const first = (await createWithKey("reuse-1", "question", format)).rows[0];
  assert.equal((await createWithKey("reuse-1", "question", format)).rows[0], first, "the same request replays");
  assert.is(await outcome(createWithKey("reuse-1", "another question", format)), "IDKEY idempotency_key");
  assert.is(await outcome(createWithKey("reuse-1", "question", null)), "IDKEY idempotency_key");
  assert.is(await outcome(createWithKey("reuse-1", "question", structured("report", { type: "string" }))), "IDKEY idempotency_key");
  const { rows: [chat] } = await createWithKey("reuse-2");
  await sendWithKey(chat.chat_id, "send-1", "once");
  assert.is(await outcome(sendWithKey(chat.chat_id, "send-1", "once")), "ok");
  assert.is(await outcome(sendWithKey(chat.chat_id, "send-1", "twice")), "IDKEY idempotency_key");
  assert.is(await outcome(sendWithKey(chat.chat_id, "reuse-1", "once")), "IDKEY idempotency_key", "another operation");
});

test("keys recorded before request hashes existed keep replaying", async () => {
  const first = (await createWithKey("legacy-1", "question")).rows[0];
  await db.pool.query("update chat_private.idempotency_keys set request_sha256 = null where owner_id = $1 and key = 'legacy-1'", [owner]);
  assert.equal((await createWithKey("legacy-1", "a different question")).rows[0], first);
});

test.run();
