// Pins what the cheaper create_chat path must keep: the state a new chat starts in (fence current at snapshot 1,
// one chat_run job), no idempotency row without a key, the caller identified before response_format is parsed,
// and the fast paths of the envelope and dynamic-tool checks reporting exactly what the full checks report.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { createChat, createUser, dynamicTool, setStructuredExperiment, structured, text } from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "cost");
  await setStructuredExperiment(db, true);
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
            (select count(*)::int from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
             where j.key = 'chat:' || c.id and t.identifier = 'chat_run' and j.max_attempts = 1 and j.revision = 0
               and j.payload::jsonb = jsonb_build_object('chat_id', c.id)) as jobs
     from chat_public.chats c where c.id = $1`, [chat.chat_id, chat.message_id]);
  assert.equal(rows[0], { status: "running", snapshot_version: 1, history_version: 1, generation_attempt: 0, messages: 1, revision: 1, jobs: 1 });
  assert.ok(chat.structured_output_request_id);
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

test.run();
