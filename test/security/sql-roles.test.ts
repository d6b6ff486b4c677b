// The SQL boundary per role: what each of chatd's roles may do directly in SQL (allowed rows run, inside a
// transaction that is rolled back) and what it is refused (SQLSTATE asserted). Each probe runs in a new session, so
// nothing a probe leaves in its session (a temporary schema, a role) helps the next one.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type pg from "pg";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { acquire, createChat, createUser } from "../support/chats.ts";
import { apiSession, inSession, ownerSession } from "./support.ts";

let db: TestDatabase;
let user: string;
let chatId: string;

test.before(async () => {
  db = await createTestDatabase();
  await migrate(db.url);
  user = await createUser(db, "probe");
  chatId = (await createChat(db, user, "probed")).chat_id;
  await acquire(db, chatId);
  await db.pool.query("insert into chat_private.model_config_secrets (model_config_id, api_key) values ('scripted', 'sk-x')");
});
test.after(async () => {
  await db.drop();
});

type Row = [role: string, sql: string, expected: "ok" | string];

/** `$chat` and `$user` stand for the probe chat and its owner. */
const MATRIX: Row[] = [
  // chat_anonymous: reads the client tables through RLS (no rows), nothing else.
  ["chat_anonymous", "select count(*) from chat_public.chats", "ok"],
  ["chat_anonymous", "select count(*) from chat_public.batches", "ok"],
  ["chat_anonymous", "select * from chat_private.settings", "42501"],
  ["chat_anonymous", "select * from chat_private.model_config_secrets", "42501"],
  ["chat_anonymous", "insert into chat_public.users (name) values ('anon')", "42501"],
  ["chat_anonymous", "select chat_private.require_user()", "42501"],
  ["chat_anonymous", "select chat_public.interrupt_chat('$chat')", "NOAUT"],
  // chat_user: its own rows through RLS; every write is a transition function.
  ["chat_user", "select count(*) from chat_public.chats", "ok"],
  ["chat_user", "select chat_public.set_chat_plan_mode('$chat', false)", "ok"],
  ["chat_user", "insert into chat_public.chats (owner_id) values ('$user')", "42501"],
  ["chat_user", "update chat_public.chats set title = 'x'", "42501"],
  ["chat_user", "delete from chat_public.chat_messages", "42501"],
  ["chat_user", "update chat_public.structured_output_requests set status = 'succeeded'", "42501"],
  ["chat_user", "insert into chat_public.chat_messages (chat_id, role, content) values ('$chat', 'assistant', '[]')", "42501"],
  ["chat_user", "select * from chat_private.chat_leases", "42501"],
  ["chat_user", "select * from chat_private.idempotency_keys", "42501"],
  ["chat_user", "select * from chat_private.model_config_secrets", "42501"],
  ["chat_user", "select * from graphile_worker._private_jobs", "42501"],
  ["chat_user", "select graphile_worker.add_job('chat_run', '{}')", "42501"],
  ["chat_user", "select chat_private.acquire_lease('$chat', 'w', 30)", "42501"],
  ["chat_user", "select chat_private._write_receipt(gen_random_uuid(), 'succeeded', null, null, '1')", "42501"],
  ["chat_user", "select chat_private.grant_execute('chat_private.acquire_lease(uuid, text, integer)', '{chat_user}')", "42501"],
  ["chat_user", "create temporary table t (x int)", "42501"],
  ["chat_user", "create function chat_public.f() returns int language sql as 'select 1'", "42501"],
  ["chat_user", "create table public.t (x int)", "42501"],
  // chat_operator: reads everything but secrets; repairs through its functions only.
  ["chat_operator", "select count(*) from chat_private.chat_leases", "ok"],
  ["chat_operator", "select * from chat_private.job_queue", "ok"],
  ["chat_operator", "select chat_private.operator_release_lease('$chat')", "ok"],
  ["chat_operator", "select * from chat_private.model_config_secrets", "42501"],
  ["chat_operator", "select * from chat_private.mcp_server_secrets", "42501"],
  ["chat_operator", "select * from chat_private.stop_hook_secrets", "42501"],
  ["chat_operator", "select * from graphile_worker._private_jobs", "42501"],
  ["chat_operator", "update chat_public.chats set title = 'x'", "42501"],
  ["chat_operator", "select chat_private.sweep_expired_leases()", "42501"],
  ["chat_operator", "create temporary table t (x int)", "42501"],
  // chat_worker: the worker transitions, the queue, the secrets, its model configs; no direct history writes.
  ["chat_worker", "select api_key from chat_private.model_config_secrets", "ok"],
  ["chat_worker", "select count(*) from chat_private.mcp_server_secrets", "ok"],
  ["chat_worker", "select count(*) from chat_private.stop_hook_secrets", "ok"],
  ["chat_worker", "select chat_private.sweep_expired_leases()", "ok"],
  ["chat_worker", "select count(*) from graphile_worker._private_jobs", "ok"],
  ["chat_worker", "update chat_private.model_configs set enabled = enabled", "ok"],
  ["chat_worker", "insert into chat_private.model_config_secrets (model_config_id, api_key) values ('scripted', 'k') on conflict (model_config_id) do update set api_key = excluded.api_key", "ok"],
  ["chat_worker", "update chat_public.chat_messages set content = '[]'", "42501"],
  ["chat_worker", "delete from chat_public.structured_output_requests", "42501"],
  ["chat_worker", "insert into chat_public.chats (owner_id) values ('$user')", "42501"],
  ["chat_worker", "update chat_private.settings set value = '1'", "42501"],
  ["chat_worker", "insert into graphile_worker.migrations (id) values (999999)", "42501"],
  ["chat_worker", "select chat_private.operator_retry_chat('$chat')", "42501"],
  ["chat_worker", "select chat_public.create_chat('[]')", "42501"],
  ["chat_worker", "create temporary table t (x int)", "42501"],
];

/** Runs one probe in a new session as `role` (chatd_api: logged in as itself), rolled back; "ok" or the SQLSTATE. */
async function probe(role: string, sql: string): Promise<string> {
  const statement = sql.replaceAll("$chat", chatId).replaceAll("$user", user);
  const run = async (client: pg.Client) => {
    await client.query("begin");
    try {
      await client.query(statement);
      return "ok";
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    } finally {
      await client.query("rollback");
    }
  };
  if (role === "chatd_api") {
    const client = await apiSession(db);
    try {
      return await run(client);
    } finally {
      await client.end();
    }
  }
  return inSession(() => ownerSession(db), role, role === "chat_anonymous" ? null : user, run);
}

for (const [role, sql, expected] of MATRIX) {
  test(`${role}: ${sql} -> ${expected}`, async () => {
    assert.is(await probe(role, sql), expected);
  });
}

test("chatd_api, the API's login, may only become chat_user or chat_anonymous, and read the /metrics gauges", async () => {
  const rows: [string, string][] = [
    ["select count(*) from chat_public.chats", "42501"],
    ["select chat_public.current_user_id()", "42501"],
    ["select chat_private.service_gauges()", "ok"],
    ["select count(*) from chat_private.turn_progress", "42501"],
    ["select count(*) from graphile_worker.jobs", "42501"],
    ["select chat_private.setting('lease_seconds')", "42501"],
    ["set local role chat_user", "ok"],
    ["set local role chat_anonymous", "ok"],
    ["set local role chat_worker", "42501"],
    ["set local role chat_operator", "42501"],
    ["create temporary table t (x int)", "42501"],
  ];
  for (const [sql, expected] of rows) assert.is(await probe("chatd_api", sql), expected, sql);
});

test("secrets are readable by chat_worker alone", async () => {
  const { rows } = await db.pool.query<{ name: string; readers: string[] }>(
    `select format('%I.%I', n.nspname, c.relname) as name,
            array(select r from unnest(array['chat_anonymous', 'chat_user', 'chat_operator', 'chat_worker', 'chatd_api', 'public']) r
                  where has_table_privilege(r, c.oid, 'SELECT') order by 1) as readers
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('chat_public', 'chat_private') and c.relname like '%secret%' and c.relkind in ('r', 'v', 'm') order by 1`);
  assert.ok(rows.length >= 3, JSON.stringify(rows));
  for (const row of rows) assert.equal(row.readers, ["chat_worker"], row.name);
});

test.run();
