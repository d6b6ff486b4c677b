// EXECUTE rights per function: every function in chatd's schemas, with exactly the roles that may execute it
// (besides its owner). A function missing from this list, or executable by PUBLIC or by a role not listed, fails.
// A new function gets its grant next to its definition in sql/ (sql/005_execute_grants.sql) and a row here.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { inSession, ownerSession } from "./support.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

const GRANTS: [string[], string[]][] = [
  // Release 5823e57's helper names, kept for one release (migration 0130): called only by that release's functions.
  [[], [
    "chat_private.accept_structured_request(uuid,jsonb,boolean)",
    "chat_private.active_request(uuid)",
    "chat_private.apply_progress(uuid,jsonb,bigint[])",
    "chat_private.begin_transition(uuid,text,uuid)",
    "chat_private.begin_worker_transition(uuid,text,uuid,bigint,bigint)",
    "chat_private.cancel_pending_calls(uuid,text)",
    "chat_private.end_turn_and_promote(uuid)",
    "chat_private.fail_turn(uuid,text,text)",
    "chat_private.idempotent_result(uuid,text,text)",
    "chat_private.insert_input(uuid,jsonb,uuid,uuid)",
    "chat_private.insert_worker_messages(uuid,jsonb)",
    "chat_private.lock_worker_chat(uuid,text,uuid,bigint,bigint,boolean)",
    "chat_private.open_turn(uuid)",
    "chat_private.promote_queue_head(uuid)",
    "chat_private.queue_message(uuid,jsonb,uuid,uuid,boolean)",
    "chat_private.record_receipt(uuid,uuid,chat_public.structured_output_status,text,text,jsonb)",
    "chat_private.remember_result(uuid,text,text,jsonb)",
    "chat_private.start_turn(uuid,bigint,uuid)",
    "chat_private.write_receipt(uuid,chat_public.structured_output_status,text,text,jsonb)",
  ]],
  // Internal: called only inside other functions (which run as the owner), by triggers, or at migration time.
  [[], [
    "chat_private.openai_idempotent_response(uuid,text,text)",
    "chat_private._openai_response_round(uuid,uuid)",
    "chat_private.webhook_check_url(text)",
    "chat_private.webhook_own_endpoint(uuid)",
    "chat_private.webhook_response_subject(uuid)",
    "chat_private.tg_batches__webhook()",
    "chat_private.tg_chats__webhook_function_calls()",
    "chat_private.tg_structured_output_requests__webhook()",
    "chat_private.tg_webhook_endpoints__fail_pending_deliveries()",
    "chat_private.webhook_enqueue(uuid,text,text,timestamp with time zone)",
    "chat_private.webhook_response_event(chat_public.structured_output_status,text)",
    "chat_private.webhook_retry_delay(integer)",
    "chat_private._accept_structured_request(uuid,jsonb,boolean)",
    "chat_private._active_request(uuid)",
    "chat_private._apply_progress(uuid,jsonb,bigint[])",
    "chat_private._begin_transition(uuid,text,uuid)",
    "chat_private._begin_worker_transition(uuid,text,uuid,bigint,bigint,boolean)",
    "chat_private._cancel_pending_calls(uuid,text,chat_public.chat_status)",
    "chat_private._check_transition_rule(chat_public.chats,text)",
    "chat_private._close_turn(uuid)",
    "chat_private._end_turn(uuid,text,text,boolean)",
    "chat_private._fail_turn(uuid,text,text)",
    "chat_private._fence_history(uuid,boolean)",
    "chat_private._finish_locked_turn(uuid,jsonb)",
    "chat_private._insert_input(uuid,jsonb,uuid,uuid)",
    "chat_private._insert_worker_messages(uuid,jsonb)",
    "chat_private._lease_is_live(uuid,uuid)",
    "chat_private._lock_for_worker_transition(uuid,text,uuid,bigint,bigint)",
    "chat_private._open_turn(uuid)",
    "chat_private._promote_after_turn(chat_public.chats)",
    "chat_private._promote_queue_head(uuid)",
    "chat_private._queue_message(uuid,jsonb,uuid,uuid,boolean)",
    "chat_private._receipt_provenance(uuid,uuid)",
    "chat_private._record_receipt(uuid,uuid,chat_public.structured_output_status,text,text,jsonb)",
    "chat_private._server_epoch()",
    "chat_private._start_turn(uuid,bigint,uuid)",
    "chat_private._to_state(text,text,text)",
    "chat_private._transition_rule(text,text)",
    "chat_private._write_receipt(uuid,chat_public.structured_output_status,text,text,jsonb)",
    "chat_private.add_job(text,json,text,timestamp with time zone,integer)",
    "chat_private.agent_child(uuid,uuid)",
    "chat_private.cancel_batch_as(uuid,uuid,text)",
    "chat_private.chat_notification(chat_public.chats,text)",
    "chat_private.chat_state(chat_public.chats)",
    "chat_private.check_agent_runner(uuid,uuid)",
    "chat_private.check_client_key(text)",
    "chat_private.check_dynamic_tools(jsonb)",
    "chat_private.check_input_content(jsonb,text)",
    "chat_private.check_workspace(text)",
    "chat_private.complete_batch_if_done(uuid)",
    "chat_private.create_chat_as(uuid,jsonb,jsonb,text,text,text,jsonb,boolean,text,boolean)",
    "chat_private.enqueue_chat_run(uuid)",
    "chat_private.experiment_enabled(text)",
    "chat_private.fill_batch_slot(chat_public.batches,integer)",
    "chat_private.grant_execute(regprocedure,text[])",
    "chat_private.graphql_tagged(text,text)",
    "chat_private._delete_chats(uuid[])",
    "chat_private.idempotent_result(uuid,text,text,text)",
    "chat_private.retention_candidates(text,integer)",
    "chat_private.transient_candidates(text,integer)",
    "chat_private.insert_batch(uuid,jsonb,jsonb,text,text,text,integer,text)",
    "chat_private.notify_batch(uuid,text)",
    "chat_private.notify_chat(uuid,text)",
    "chat_private.notify_chat_row(chat_public.chats,text)",
    "chat_private.parse_response_format(text)",
    "chat_private.remember_result(uuid,text,text,jsonb,text)",
    "chat_private.request_sha256(jsonb)",
    "chat_private.require_user()",
    "chat_private.start_batch_item(chat_public.batches,integer,jsonb,integer)",
    "chat_private.tg_chat_messages__fence_delete()",
    "chat_private.tg_chat_messages__fence_update()",
    "chat_private.tg_chat_messages__guard_receipts()",
    "chat_private.tg_chat_messages__stamp_revision_and_fence_history()",
    "chat_private.tg_chat_queued_messages__bump_queue_version()",
    "chat_private.tg_chats__enqueue_run()",
    "chat_private.tg_chats__touch()",
    "chat_private.tg_structured_output_requests__finish_batch_item()",
    "chat_private.tg_turn_progress__enqueue_run()",
    "chat_private.tg_worker_config__bump()",
    "chat_private.worker_message_kind(jsonb)",
  ]],
  // Operator repairs and reads.
  [["chat_operator"], [
    "chat_private.webhook_add(uuid,text,text[],text)",
    "chat_private.webhook_list(uuid)",
    "chat_private.webhook_remove(uuid)",
    "chat_private.webhook_replay(bigint)",
    "chat_private.webhook_rotate(uuid,text,interval)",
    "chat_private.operator_cancel_batch(uuid,text)",
    "chat_private.operator_create_batch(uuid,text,jsonb,text,text,text,integer,text)",
    "chat_private.operator_delete_chat(uuid)",
    "chat_private.operator_delete_user(uuid)",
    "chat_private.operator_release_lease(uuid)",
    "chat_private.retention_due()",
    "chat_private.operator_retry_chat(uuid)",
    "chat_private.setting(text)",
    "chat_private.setting_int(text)",
  ]],
  // Worker transitions.
  [["chat_worker"], [
    "chat_private.webhook_delivery_for_send(bigint)",
    "chat_private.webhook_record_attempt(bigint,integer,text,integer)",
    "chat_private.webhook_sweep(interval)",
    "chat_private.acquire_lease(uuid,text,integer)",
    "chat_private.agent_interrupt(uuid,uuid,uuid)",
    "chat_private.agent_send(uuid,uuid,uuid,jsonb,boolean)",
    "chat_private.cancel_requires_action(uuid)",
    "chat_private.commit_step(uuid,uuid,bigint,bigint,jsonb,jsonb,text[])",
    "chat_private.commit_step_and_finish_turn(uuid,uuid,bigint,bigint,jsonb,jsonb,jsonb,text[])",
    "chat_private.compact_history(uuid,uuid,bigint,bigint,text,bigint,text,jsonb)",
    "chat_private.current_fence(uuid)",
    "chat_private.enter_requires_action(uuid,uuid,bigint,bigint,jsonb,integer)",
    "chat_private.finish_batch_validation(uuid,text)",
    "chat_private.finish_error(uuid,uuid,bigint,bigint,text,text)",
    "chat_private.finish_interruption(uuid,uuid,bigint,bigint,jsonb)",
    "chat_private.finish_turn(uuid,uuid,bigint,bigint,jsonb)",
    "chat_private.record_retry_state(uuid,uuid,bigint,bigint,jsonb)",
    "chat_private.release_lease(uuid,uuid)",
    "chat_private.renew_lease(uuid,uuid,integer)",
    "chat_private.renew_leases(uuid[],uuid[],integer[])",
    "chat_private.report_worker_alive(text,text,numeric)",
    "chat_private.report_worker_stopped(text)",
    "chat_private.spawn_child_chat(uuid,uuid,jsonb,text,text)",
    "chat_private.sweep_batches(interval)",
    "chat_private.sweep_expired_leases()",
    "chat_private.turn_state(uuid)",
  ]],
  // Client transitions (GraphQL mutations); anonymous calls are refused with NOAUT.
  // The OpenAI-compatible /v1 routes (sql/155): they run only for a token's user.
  [["chat_user"], [
    "chat_public.add_webhook_endpoint(text,text[])",
    "chat_public.remove_webhook_endpoint(uuid)",
    "chat_public.rotate_webhook_endpoint_secret(uuid,integer)",
    "chat_public.webhook_endpoints()",
    "chat_public.openai_cancel_response(uuid)",
    "chat_public.openai_continue_response(uuid,jsonb,jsonb,boolean,jsonb,text,text)",
    "chat_public.openai_create_response(jsonb,text,text,text,jsonb,boolean,jsonb,text,text)",
    "chat_public.openai_follow_up_response(uuid,jsonb,text,text,text,jsonb,boolean,jsonb,text,text)",
    "chat_public.openai_response(uuid)",
  ]],
  [["chat_anonymous", "chat_user"], [
    "chat_public.archive_chat(uuid,boolean)",
    "chat_public.cancel_batch(uuid)",
    "chat_public.compact_chat(uuid)",
    "chat_public.create_batch(text,jsonb,text,text,text,integer,text)",
    "chat_public.create_chat(jsonb,text,text,text,text,jsonb,boolean,text)",
    "chat_public.delete_chat(uuid)",
    "chat_public.delete_queued_message(bigint)",
    "chat_public.edit_chat_message(bigint,jsonb,text,text,bigint)",
    "chat_public.edit_message(bigint,jsonb,text)",
    "chat_public.find_structured_output_request(uuid)",
    "chat_public.interrupt_chat(uuid)",
    "chat_public.promote_queued_message(bigint)",
    "chat_public.send_chat_message(uuid,jsonb,text,text,text)",
    "chat_public.send_message(uuid,jsonb,text,chat_public.busy_behavior,text)",
    "chat_public.set_chat_mcp_servers(uuid,text[])",
    "chat_public.set_chat_plan_mode(uuid,boolean)",
    "chat_public.submit_tool_results(uuid,jsonb)",
  ]],
  // Shared by operators and the worker.
  [["chat_operator", "chat_worker"], [
    "chat_private.operator_cancel_request(uuid,text)",
    "chat_private.dispatch_batch(uuid)",
    "chat_private.response_format_errors(jsonb)",
    "chat_private.run_retention()",
    "chat_private.schema_sha256(jsonb)",
    // The live predicates, inlined into the operator views and the sweep (security invoker views need EXECUTE).
    "chat_private.lease_row_is_live(timestamp with time zone)",
    "chat_private.worker_row_is_live(timestamp with time zone)",
  ]],
  // GraphQL computed columns and result fields (read under RLS).
  [["chat_anonymous", "chat_user", "chat_operator"], [
    "chat_public.chat_input_result_chat(chat_public.chat_input_result)",
    "chat_public.chat_input_result_message(chat_public.chat_input_result)",
    "chat_public.chat_input_result_queued_message(chat_public.chat_input_result)",
    "chat_public.chat_input_result_receipts(chat_public.chat_input_result)",
    "chat_public.chat_input_result_structured_output_request(chat_public.chat_input_result)",
    "chat_public.chat_messages_structured_output(chat_public.chat_messages)",
    "chat_public.chats_messages(chat_public.chats,bigint,bigint)",
    "chat_public.chats_pending_structured_requests(chat_public.chats)",
    "chat_public.chats_queue(chat_public.chats)",
    "chat_public.structured_output_enabled()",
  ]],
  // The database gauges of /metrics: the API's login itself (no set role) and the worker's metrics server.
  [["chat_worker", "chatd_api"], [
    "chat_private.service_gauges()",
  ]],
  // Identity (RLS policies call it); batch item counts (read under RLS).
  [["chat_anonymous", "chat_user", "chat_operator", "chat_worker"], [
    "chat_public.batches_item_counts(chat_public.batches)",
    "chat_public.current_user_id()",
  ]],
];

const SCHEMAS = ["chat_public", "chat_private", "chatd_meta"];

/** Function signature -> the roles that may execute it besides the owner ("PUBLIC" for everyone), sorted. */
async function actualGrants(): Promise<Map<string, string[]>> {
  const { rows } = await db.pool.query<{ fn: string; roles: string[] }>(
    `select p.oid::regprocedure::text as fn,
            array(select case when a.grantee = 0 then 'PUBLIC' else pg_catalog.pg_get_userbyid(a.grantee)::text end
                  from pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
                  where a.grantee <> p.proowner and a.privilege_type = 'EXECUTE' order by 1) as roles
     from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
     where n.nspname = any ($1) order by 1`, [SCHEMAS]);
  return new Map(rows.map((row) => [row.fn, row.roles]));
}

function expectedGrants(): Map<string, string[]> {
  const expected = new Map<string, string[]>();
  for (const [roles, functions] of GRANTS) {
    for (const fn of functions) {
      assert.not.ok(expected.has(fn), `${fn} is listed twice`);
      expected.set(fn, [...roles].sort());
    }
  }
  return expected;
}

function differences(actual: Map<string, string[]>, expected: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [fn, roles] of actual) {
    const want = expected.get(fn);
    if (!want) out.push(`${fn}: not on the list (executable by ${roles.join(", ") || "its owner only"})`);
    else if (want.join() !== roles.join()) out.push(`${fn}: executable by [${roles.join(", ")}], listed [${want.join(", ")}]`);
  }
  for (const fn of expected.keys()) if (!actual.has(fn)) out.push(`${fn}: listed but does not exist`);
  return out;
}

test("every function in chatd's schemas is executable by exactly the listed roles", async () => {
  assert.equal(differences(await actualGrants(), expectedGrants()), []);
});

test("no chatd function is executable by PUBLIC", async () => {
  const publicOnes = [...(await actualGrants())].filter(([, roles]) => roles.includes("PUBLIC")).map(([fn]) => fn);
  assert.equal(publicOnes, []);
});

test("a function the owner creates later is not executable by PUBLIC (the global default privilege)", async () => {
  await db.pool.query("create function chat_private.probe_default_acl() returns int language sql as 'select 1'");
  try {
    const state = await inSession(() => ownerSession(db), "chat_user", null,
      (client) => sqlState(client.query("select chat_private.probe_default_acl()")));
    assert.is(state, "42501");
    const { rows } = await db.pool.query<{ public: boolean }>(
      "select has_function_privilege('public', 'chat_private.probe_default_acl()', 'EXECUTE') as public");
    assert.is(rows[0]!.public, false);
  } finally {
    await db.pool.query("drop function chat_private.probe_default_acl()");
  }
});

test("re-applying sql/ restores exactly the listed rights (a stray grant is taken back)", async () => {
  await db.pool.query("grant execute on function chat_private.acquire_lease(uuid, text, integer) to public, chat_user");
  await db.pool.query("grant execute on function chat_public.create_chat(jsonb, text, text, text, text, jsonb, boolean, text) to chat_worker");
  await db.pool.query("revoke execute on function chat_private.renew_lease(uuid, uuid, integer) from chat_worker");
  assert.is(differences(await actualGrants(), expectedGrants()).length, 3);
  // Forget which sql/ statements the database has: the run applies all of them.
  await db.pool.query("delete from chatd_meta.repeatable_statements");
  const result = await migrate(db.url);
  assert.ok(result.sqlFilesApplied.length > 0, "the sql/ files were re-applied");
  assert.equal(differences(await actualGrants(), expectedGrants()), []);
});

test("the role matrix: each role calls a function of its own and is refused another's (42501)", async () => {
  const probes: [string, string, boolean][] = [
    ["chat_anonymous", "select chat_public.current_user_id()", true],
    ["chat_anonymous", "select chat_private.require_user()", false],
    ["chat_user", "select chat_private.acquire_lease(gen_random_uuid(), 'w', 30)", false],
    ["chat_user", "select chat_private.operator_release_lease(gen_random_uuid())", false],
    ["chat_user", "select chat_private._insert_input(gen_random_uuid(), '[]', null, null)", false],
    ["chat_operator", "select chat_private.operator_release_lease(gen_random_uuid())", true],
    ["chat_operator", "select chat_private.sweep_expired_leases()", false],
    ["chat_worker", "select chat_private.sweep_expired_leases()", true],
    ["chat_worker", "select chat_private.operator_retry_chat(gen_random_uuid())", false],
    ["chatd_api", "select chat_public.current_user_id()", false],
  ];
  for (const [role, sql, allowed] of probes) {
    const outcome = await inSession(() => ownerSession(db), role, null, async (client) => {
      try {
        await client.query(sql);
        return "ok";
      } catch (error) {
        return (error as { code?: string }).code ?? "error";
      }
    });
    if (allowed) assert.ok(outcome !== "42501", `${role}: ${sql} was refused`);
    else assert.is(outcome, "42501", `${role}: ${sql}`);
  }
});

test.run();
