// Privileges and row-level security per role: clients see only their own user-visible rows
// and write nothing directly; operators read everything but secrets; anonymous sees nothing; workers run the
// worker transitions, clients cannot.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import {
  acquire, assistantText, commitCandidate, commitStep, createChat, createUser, editMessage, finishTurn, sendMessage,
  setStructuredExperiment, structured, text,
} from "../support/chats.ts";

let db: TestDatabase;
let owner: string;
let other: string;
let chatId: string;
let queuedId: string;
let messageId: string;
let requestId: string;

test.before(async () => {
  db = await createTestDatabase();
  owner = await createUser(db, "owner");
  other = await createUser(db, "other");
  await setStructuredExperiment(db, true);
  await db.pool.query("insert into chat_private.model_config_secrets (model_config_id, api_key) values ('scripted', 'sk-secret')");
  const chat = await createChat(db, owner, "owner's chat", structured());
  chatId = chat.chat_id;
  messageId = chat.message_id!;
  requestId = chat.structured_output_request_id!;
  await acquire(db, chatId);
  queuedId = (await sendMessage(db, owner, chatId, "queued", structured("queued"))).queued_message_id!;
});
test.after(async () => {
  await db.drop();
});

const publicTables = ["chat_public.users", "chat_public.chats", "chat_public.chat_messages", "chat_public.chat_queued_messages",
  "chat_public.structured_output_requests", "chat_public.batches", "chat_public.batch_items"];

async function allTables(): Promise<{ name: string; column: string }[]> {
  const { rows } = await db.pool.query<{ name: string; column: string }>(
    `select format('%I.%I', n.nspname, c.relname) as name,
            (select attname from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
               and a.attidentity = '' and a.attgenerated = ''
             order by attnum limit 1) as column
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('chat_public', 'chat_private') and c.relkind in ('r', 'p') order by 1`);
  return rows;
}

const rowsOf = (role: string, userId: string | null, sql: string, params: unknown[] = []) =>
  db.as(role, userId, async (client) => (await client.query(sql, params)).rows);

const chatScoped: Record<string, string> = {
  "chat_public.chats": "id = $1",
  "chat_public.chat_messages": "chat_id = $1",
  "chat_public.chat_queued_messages": "chat_id = $1",
  "chat_public.structured_output_requests": "chat_id = $1",
};

test("the owner sees their chat, messages, queued messages and requests", async () => {
  for (const [table, where] of Object.entries(chatScoped)) {
    const rows = await rowsOf("chat_user", owner, `select * from ${table} where ${where}`, [chatId]);
    assert.ok(rows.length > 0, table);
  }
  assert.equal((await rowsOf("chat_user", owner, "select id from chat_public.users")).map((r) => r.id), [owner]);
});

test("another user's chat, messages, queued messages and requests are invisible (0 rows)", async () => {
  for (const [table, where] of Object.entries(chatScoped)) {
    assert.equal(await rowsOf("chat_user", other, `select * from ${table} where ${where}`, [chatId]), [], table);
  }
  assert.equal(await rowsOf("chat_user", other, "select * from chat_public.structured_output_requests where id = $1", [requestId]), []);
  assert.equal((await rowsOf("chat_user", other, "select id from chat_public.users")).map((r) => r.id), [other]);
});

test("another user's transitions raise CHNTF, QMNTF or MSNTF and change nothing", async () => {
  const before = await db.pool.query("select snapshot_version from chat_public.chats where id = $1", [chatId]);
  const calls: [string, unknown[], string][] = [
    ["select chat_public.send_chat_message($1, $2)", [chatId, text("intruder")], "CHNTF"],
    ["select chat_public.interrupt_chat($1)", [chatId], "CHNTF"],
    ["select chat_public.archive_chat($1)", [chatId], "CHNTF"],
    ["select chat_public.set_chat_plan_mode($1, false)", [chatId], "CHNTF"],
    ["select chat_public.submit_tool_results($1, '[]')", [chatId], "CHNTF"],
    ["select chat_public.delete_queued_message($1)", [queuedId], "QMNTF"],
    ["select chat_public.promote_queued_message($1)", [queuedId], "QMNTF"],
    ["select chat_public.edit_chat_message($1, $2)", [messageId, text("intruder")], "MSNTF"],
  ];
  for (const [sql, params, code] of calls) {
    assert.is(await sqlState(db.as("chat_user", other, (client) => client.query(sql, params), true)), code, sql);
  }
  const after = await db.pool.query("select snapshot_version from chat_public.chats where id = $1", [chatId]);
  assert.equal(after.rows, before.rows);
});

test("model-only rows are invisible to the owner; operators see them", async () => {
  const chat = await createChat(db, owner, "with hidden context");
  const fence = await acquire(db, chat.chat_id);
  await commitStep(db, fence, [
    { role: "user", kind: "control", visibility: "model", content: [{ type: "text", text: "hook context" }] },
    { role: "assistant", visibility: "model", content: [{ type: "text", text: "model only" }] },
    assistantText("visible"),
  ]);
  const seen = await rowsOf("chat_user", owner, "select visibility from chat_public.chat_messages where chat_id = $1", [chat.chat_id]);
  assert.equal(seen.map((r) => r.visibility), ["both", "both"]);
  const operator = await rowsOf("chat_operator", null, "select visibility from chat_public.chat_messages where chat_id = $1", [chat.chat_id]);
  assert.is(operator.length, 4);
});

test("rows discarded by an edit are hidden from the owner; receipts stay visible", async () => {
  const chat = await createChat(db, owner, "m1", structured("first"));
  let fence = await acquire(db, chat.chat_id);
  fence = await commitCandidate(db, fence, '"done"');
  await finishTurn(db, fence);
  const second = await sendMessage(db, owner, chat.chat_id, "m2", structured("second"));
  const edit = await editMessage(db, owner, chat.message_id!, "m1 again", JSON.stringify({ type: "text" }));
  const { rows: deleted } = await db.pool.query<{ id: string; kind: string }>(
    "select id, kind from chat_public.chat_messages where chat_id = $1 and deleted order by id", [chat.chat_id]);
  assert.ok(deleted.some((r) => r.kind === "receipt"), "the finished request's receipt was in the discarded suffix");
  const seen = await rowsOf("chat_user", owner,
    "select id, kind, deleted, structured_output_request_id as request from chat_public.chat_messages where chat_id = $1 order by id",
    [chat.chat_id]);
  const visibleIds = new Set(seen.map((r) => String(r.id)));
  for (const row of deleted) assert.is(visibleIds.has(row.id), row.kind === "receipt", `${row.kind} ${row.id}`);
  const receiptsSeen = seen.filter((r) => r.kind === "receipt").map((r) => r.request);
  assert.equal(receiptsSeen, [chat.structured_output_request_id, second.structured_output_request_id]);
  assert.ok(visibleIds.has(edit.message_id!));
});

test("chat_user cannot INSERT, UPDATE or DELETE any table directly (42501)", async () => {
  for (const { name, column } of await allTables()) {
    const col = pg.escapeIdentifier(column);
    for (const sql of [`insert into ${name} default values`, `update ${name} set ${col} = ${col}`, `delete from ${name}`]) {
      assert.is(await sqlState(db.as("chat_user", owner, (client) => client.query(sql))), "42501", sql);
    }
  }
});

test("chat_user cannot read chat_private (42501)", async () => {
  for (const { name } of (await allTables()).filter((t) => t.name.startsWith("chat_private."))) {
    assert.is(await sqlState(rowsOf("chat_user", owner, `select * from ${name}`)), "42501", name);
  }
});

test("chat_operator reads every table but those holding secrets (42501)", async () => {
  for (const { name } of await allTables()) {
    // Secrets live in their own *_secrets tables (model configs, MCP servers, hooks) that only the worker reads, and
    // in webhook_endpoints (signing secrets), which the operator commands reach through security definer functions.
    if (name.startsWith("chat_private.") && (name.endsWith("_secrets") || name === "chat_private.webhook_endpoints")) {
      assert.is(await sqlState(rowsOf("chat_operator", null, `select * from ${name}`)), "42501", name);
      continue;
    }
    const seen = await rowsOf("chat_operator", null, `select count(*)::int as n from ${name}`);
    const all = await db.pool.query(`select count(*)::int as n from ${name}`);
    assert.equal(seen, all.rows, name);
  }
  const { rows } = await db.pool.query("select count(*)::int as n from chat_public.chat_messages");
  assert.ok(rows[0]!.n > 0);
});

test("chat_operator writes nothing but a new user's name (42501 elsewhere)", async () => {
  for (const { name, column } of await allTables()) {
    const col = pg.escapeIdentifier(column);
    // `chatd batch --user` and `chatd token` create the user they name (migration 0051): a user's name, nothing else.
    const inserts = name === "chat_public.users"
      ? ["insert into chat_public.users (id, name) values (gen_random_uuid(), 'x')"]
      : [`insert into ${name} default values`];
    for (const sql of [...inserts, `update ${name} set ${col} = ${col}`, `delete from ${name}`]) {
      assert.is(await sqlState(db.as("chat_operator", null, (client) => client.query(sql))), "42501", sql);
    }
  }
  const name = `operator-made-${Date.now()}`;
  const made = await rowsOf("chat_operator", null, "insert into chat_public.users (name) values ($1) returning name", [name]);
  assert.equal(made, [{ name }]);
});

test("chat_operator cannot run transitions (42501)", async () => {
  assert.is(await sqlState(rowsOf("chat_operator", null, "select chat_public.interrupt_chat($1)", [chatId])), "42501");
  assert.is(await sqlState(rowsOf("chat_operator", null, "select chat_private.sweep_expired_leases()")), "42501");
});

test("chat_anonymous sees nothing: 42501 on private tables, 42501 or 0 rows on public ones", async () => {
  for (const { name } of await allTables()) {
    if (name.startsWith("chat_private.")) {
      assert.is(await sqlState(rowsOf("chat_anonymous", null, `select * from ${name}`)), "42501", name);
    } else {
      assert.ok(publicTables.includes(name), `unexpected public table ${name}`);
      const outcome = await rowsOf("chat_anonymous", null, `select * from ${name}`).then((rows) => rows.length, (error: { code?: string }) => error.code);
      assert.ok(outcome === 0 || outcome === "42501", `${name}: ${outcome}`);
    }
  }
});

test("transitions without an authenticated user raise NOAUT", async () => {
  const calls: [string, unknown[]][] = [
    ["select chat_public.create_chat($1)", [text("hi")]],
    ["select chat_public.send_chat_message($1, $2)", [chatId, text("hi")]],
    ["select chat_public.edit_chat_message($1, $2)", [messageId, text("hi")]],
    ["select chat_public.delete_queued_message($1)", [queuedId]],
    ["select chat_public.promote_queued_message($1)", [queuedId]],
    ["select chat_public.interrupt_chat($1)", [chatId]],
    ["select chat_public.submit_tool_results($1, '[]')", [chatId]],
    ["select chat_public.archive_chat($1)", [chatId]],
    ["select chat_public.set_chat_plan_mode($1, true)", [chatId]],
  ];
  for (const [sql, params] of calls) {
    assert.is(await sqlState(db.as("chat_anonymous", null, (client) => client.query(sql, params))), "NOAUT", `anonymous: ${sql}`);
    assert.is(await sqlState(db.as("chat_user", null, (client) => client.query(sql, params))), "NOAUT", `no sub: ${sql}`);
    assert.is(await sqlState(db.as("chat_user", "00000000-0000-4000-8000-000000000000", (client) => client.query(sql, params))),
      "NOAUT", `unknown user: ${sql}`);
  }
});

test("chat_worker can execute the worker transitions", async () => {
  const chat = await createChat(db, owner, "worker run");
  await db.as("chat_worker", null, async (client) => {
    const fence = await acquire(db, chat.chat_id, "w", client);
    const next = await commitStep(db, fence, [assistantText("from the worker role")], { steps: 1 }, client);
    assert.is(await finishTurn(db, next, null, client), "waiting");
    await client.query("select chat_private.sweep_expired_leases(), chat_private.current_fence($1)", [chat.chat_id]);
    await client.query("select chat_private.renew_lease($1, $2), chat_private.release_lease($1, $2)", [chat.chat_id, fence.runnerId]);
    const { rows } = await client.query("select api_key from chat_private.model_config_secrets");
    assert.equal(rows, [{ api_key: "sk-secret" }]);
  });
});

test("chat_user can execute no chat_private function (42501), nor can anyone run internal helpers", async () => {
  const { rows } = await db.pool.query<{ fn: string; user_can: boolean; worker_can: boolean }>(
    `select p.oid::regprocedure::text as fn, has_function_privilege('chat_user', p.oid, 'execute') as user_can,
            has_function_privilege('chat_worker', p.oid, 'execute') as worker_can
     from pg_proc p where p.pronamespace = 'chat_private'::regnamespace`);
  assert.ok(rows.length > 20);
  // Even with execute on a function, chat_user lacks usage on the schema.
  assert.is((await db.pool.query("select has_schema_privilege('chat_user', 'chat_private', 'usage') as ok")).rows[0]!.ok, false);
  // The helpers that take the chat lock for a transition or assume it is held are named with a leading _.
  const internal = rows.filter((r) => r.fn.startsWith("chat_private._"));
  for (const name of ["_begin_transition", "_begin_worker_transition", "_record_receipt", "_write_receipt", "_fail_turn"]) {
    assert.ok(internal.some((r) => r.fn.startsWith(`chat_private.${name}(`)), name);
  }
  for (const r of internal) assert.equal([r.user_can, r.worker_can], [false, false], r.fn);
  for (const sql of [
    "select chat_private.acquire_lease($1, 'w')",
    "select chat_private.commit_step($1, gen_random_uuid(), 0, 0, '[]')",
    "select chat_private.finish_turn($1, gen_random_uuid(), 0, 0)",
    "select chat_private.finish_error($1, gen_random_uuid(), 0, 0, 'k', 'm')",
    "select chat_private.finish_interruption($1, gen_random_uuid(), 0, 0)",
    "select chat_private.enter_requires_action($1, gen_random_uuid(), 0, 0, '[]')",
    "select chat_private.cancel_requires_action($1)",
    "select chat_private.sweep_expired_leases() where $1::uuid is not null",
    "select chat_private._write_receipt($1, 'canceled', 'operator_canceled')",
  ]) {
    assert.is(await sqlState(rowsOf("chat_user", owner, sql, [chatId])), "42501", sql);
  }
  assert.is(await sqlState(rowsOf("chat_worker", null, "select chat_private._write_receipt($1, 'canceled', 'operator_canceled')",
    [requestId])), "42501");
});

test.run();
