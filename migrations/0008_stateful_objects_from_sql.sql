-- Up Migration
-- Everything with state or locks that the repeatable sql/ files used to re-create on every change: types, row-level
-- security and policies, schema and table grants, triggers and seed rows. From here on each change of these is a
-- numbered migration of its own (sql/README.md); sql/ keeps only what `create or replace` and `comment on` can
-- replace without a table lock.
--
-- Adoption: a database installed before this migration already has every object below, made by sql/ with these
-- same definitions. Each is therefore created only when it is missing, so that this upgrade takes no table lock
-- (altering row-level security, or creating a policy or a trigger, locks the table even when nothing changes).
--
-- Ordering: a trigger needs its function, and a policy the functions its expression calls, before they exist in a
-- fresh database, where sql/ runs after the migrations. This migration therefore defines those functions first,
-- as sql/ defined them when it was written; `chatd migrate` re-applies all of sql/ after any migration, which
-- replaces each with its current definition.

-- Only for this migration's session: "does the table have this trigger / policy?"
create function pg_temp.missing_trigger(p_table regclass, p_name name) returns boolean as $$
  select not exists (select from pg_catalog.pg_trigger where tgrelid = p_table and tgname = p_name);
$$ language sql stable;
create function pg_temp.missing_policy(p_table regclass, p_name name) returns boolean as $$
  select not exists (select from pg_catalog.pg_policy where polrelid = p_table and polname = p_name);
$$ language sql stable;

-- Types (were behind `if not exists` in sql/050, 085 and 095, so that a changed definition never reached a
-- database that had the type already).
do $$ begin
  if to_regtype('chat_public.chat_input_result') is null then
    create type chat_public.chat_input_result as (
      chat_id uuid, message_id bigint, queued_message_id bigint, structured_output_request_id uuid,
      receipt_message_ids bigint[]);
  end if;
  if to_regtype('chat_private.fence') is null then
    create type chat_private.fence as (runner_id uuid, history_version bigint, generation_attempt bigint);
  end if;
  if to_regtype('chat_public.busy_behavior') is null then
    create type chat_public.busy_behavior as enum ('queue', 'interrupt');
  end if;
  if to_regtype('chat_public.structured_output_error') is null then
    create type chat_public.structured_output_error as (code text, message text);
  end if;
  if to_regtype('chat_public.structured_output') is null then
    create type chat_public.structured_output as (
      request_id uuid, status chat_public.structured_output_status, value jsonb, value_json text,
      error chat_public.structured_output_error);
  end if;
  if to_regtype('chat_public.batch_item_counts') is null then
    create type chat_public.batch_item_counts as (
      pending integer, running integer, succeeded integer, failed integer, canceled integer);
  end if;
end $$;

-- Functions the policies and triggers below need (current definitions: sql/010, 020, 095 and 120).
create or replace function chat_public.current_user_id() returns uuid as $$
  select case when pg_catalog.current_setting('jwt.claims.sub', true)
                   operator(pg_catalog.~) '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
              then pg_catalog.current_setting('jwt.claims.sub', true)::pg_catalog.uuid end;
$$ language sql stable;

create or replace function chat_private.tg_chat_messages__stamp_revision() returns trigger as $$
declare
  v_chat record;
begin
  if TG_OP = 'INSERT' then
    if NEW.revision is not null then
      raise exception 'chat_messages.revision is assigned by the database' using errcode = 'RVMAN';
    end if;
  else
    if NEW.revision is distinct from OLD.revision then
      raise exception 'chat_messages.revision is assigned by the database' using errcode = 'RVMAN';
    end if;
    if NEW.chat_id is distinct from OLD.chat_id then
      raise exception 'a message cannot move to another chat' using errcode = 'MSIMM';
    end if;
  end if;
  select c.snapshot_version, c.history_version, c.generation_attempt into v_chat
  from chat_public.chats c where c.id = NEW.chat_id;
  NEW.revision := v_chat.snapshot_version;
  if TG_OP = 'INSERT' and NEW.kind <> 'receipt'
     and (v_chat.history_version is distinct from v_chat.snapshot_version or v_chat.generation_attempt <> 0) then
    update chat_public.chats c set history_version = c.snapshot_version, generation_attempt = 0
    where c.id = NEW.chat_id;
  end if;
  return NEW;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chat_messages__guard_receipts() returns trigger as $$
begin
  if TG_OP = 'INSERT' then
    if NEW.kind = 'receipt' and coalesce(current_setting('chatd.writing_receipt', true), '') <> 'on' then
      raise exception 'receipts are written only by the structured-output transitions' using errcode = 'RCFRB';
    end if;
    return NEW;
  end if;
  if OLD.kind = 'receipt' and (
       NEW.chat_id is distinct from OLD.chat_id or NEW.role is distinct from OLD.role
    or NEW.visibility is distinct from OLD.visibility or NEW.kind is distinct from OLD.kind
    or NEW.content is distinct from OLD.content or NEW.structured_output is distinct from OLD.structured_output
    or NEW.structured_output_request_id is distinct from OLD.structured_output_request_id) then
    raise exception 'a receipt is immutable (only lifecycle flags may change)' using errcode = 'RCIMM';
  end if;
  if NEW.kind = 'receipt' and OLD.kind <> 'receipt' then
    raise exception 'a message cannot become a receipt' using errcode = 'RCFRB';
  end if;
  return NEW;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chat_messages__fence_update() returns trigger as $$
begin
  update chat_public.chats c set history_version = c.snapshot_version, generation_attempt = 0
  from (select distinct n.chat_id from new_rows n join old_rows o on o.id = n.id
        where n.content is distinct from o.content or n.deleted is distinct from o.deleted) changed
  where c.id = changed.chat_id
    and (c.history_version is distinct from c.snapshot_version or c.generation_attempt <> 0);
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chat_messages__fence_delete() returns trigger as $$
begin
  update chat_public.chats c set history_version = c.snapshot_version, generation_attempt = 0
  from (select distinct chat_id from old_rows) changed
  where c.id = changed.chat_id
    and (c.history_version is distinct from c.snapshot_version or c.generation_attempt <> 0);
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chat_queued_messages__bump_queue_version() returns trigger as $$
begin
  update chat_public.chats c set queue_version = c.snapshot_version
  from (select chat_id from changed_rows) changed
  where c.id = changed.chat_id and c.queue_version is distinct from c.snapshot_version;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chats__enqueue_run() returns trigger as $$
begin
  perform chat_private.enqueue_chat_run(NEW.id);
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_turn_progress__enqueue_run() returns trigger as $$
begin
  if exists (select 1 from chat_public.chats where id = NEW.chat_id and status in ('running', 'interrupting')) then
    perform chat_private.enqueue_chat_run(NEW.chat_id);
  end if;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_chats__touch() returns trigger as $$
begin
  NEW.updated_at := now();
  return NEW;
end;
$$ language plpgsql volatile set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_structured_output_requests__finish_batch_item() returns trigger as $$
declare
  v_batch chat_public.batches;
  v_batch_id uuid;
  v_slot integer;
begin
  update chat_public.batch_items set status = NEW.status::text::chat_public.batch_item_status,
    error_code = NEW.error_code, error_message = NEW.error_message, finished_at = coalesce(NEW.finished_at, now())
  where structured_output_request_id = NEW.id and status = 'running'
  returning batch_id, slot into v_batch_id, v_slot;
  if v_batch_id is null then
    return null;
  end if;
  if v_slot is null then
    -- An item started before slots existed: fill whatever is free under the batch lock instead.
    perform chat_private.dispatch_batch(v_batch_id);
    return null;
  end if;
  select * into v_batch from chat_public.batches where id = v_batch_id;
  if v_batch.status <> 'running' or v_slot > v_batch.concurrency
     or not chat_private.fill_batch_slot(v_batch, v_slot) then
    perform chat_private.complete_batch_if_done(v_batch_id);
  end if;
  perform chat_private.notify_batch(v_batch_id, 'progress');
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

create or replace function chat_private.tg_worker_config__bump() returns trigger as $$
begin
  update chat_private.worker_config_version set version = version + 1 where id;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;

-- Privileges and row-level security (were in sql/080, 085, 095, 100, 110 and 120). Clients (chat_user) only SELECT,
-- through RLS; every write is a security definer transition. chat_operator reads everything except secrets and
-- writes nothing. chat_worker runs the worker transitions.
grant usage on schema chat_public to chat_anonymous, chat_user, chat_operator, chat_worker;
grant usage on schema chat_private to chat_operator, chat_worker;

do $$
declare
  v_table regclass;
begin
  foreach v_table in array array[
    'chat_public.users', 'chat_public.chats', 'chat_public.chat_messages', 'chat_public.chat_queued_messages',
    'chat_public.structured_output_requests', 'chat_public.batches', 'chat_public.batch_items',
    'chat_private.model_configs', 'chat_private.model_config_secrets', 'chat_private.chat_leases',
    'chat_private.turn_progress', 'chat_private.message_internals', 'chat_private.experiments',
    'chat_private.settings', 'chat_private.idempotency_keys', 'chat_private.transition_rules',
    'chat_private.stop_hooks', 'chat_private.stop_hook_secrets', 'chat_private.mcp_servers',
    'chat_private.mcp_server_secrets', 'chat_private.worker_config_version']::regclass[] loop
    if not (select relrowsecurity from pg_class where oid = v_table) then
      execute format('alter table %s enable row level security', v_table);
    end if;
  end loop;
end $$;

-- Clients see their own rows. Model-only rows (summaries, hook context) are hidden; rows discarded by an edit are
-- hidden too, except receipts, so that a result is never lost from view.
do $$ begin
  if pg_temp.missing_policy('chat_public.users', 'select_own') then
    create policy select_own on chat_public.users for select to chat_user using (id = chat_public.current_user_id());
  end if;
  if pg_temp.missing_policy('chat_public.chats', 'select_own') then
    create policy select_own on chat_public.chats for select to chat_user using (owner_id = chat_public.current_user_id());
  end if;
  if pg_temp.missing_policy('chat_public.chat_messages', 'select_own') then
    create policy select_own on chat_public.chat_messages for select to chat_user using (
      visibility in ('user', 'both') and (not deleted or kind = 'receipt')
      and exists (select 1 from chat_public.chats c where c.id = chat_id and c.owner_id = chat_public.current_user_id()));
  end if;
  if pg_temp.missing_policy('chat_public.chat_queued_messages', 'select_own') then
    create policy select_own on chat_public.chat_queued_messages for select to chat_user using (
      exists (select 1 from chat_public.chats c where c.id = chat_id and c.owner_id = chat_public.current_user_id()));
  end if;
  if pg_temp.missing_policy('chat_public.structured_output_requests', 'select_own') then
    create policy select_own on chat_public.structured_output_requests for select to chat_user using (
      exists (select 1 from chat_public.chats c where c.id = chat_id and c.owner_id = chat_public.current_user_id()));
  end if;
  if pg_temp.missing_policy('chat_public.batches', 'select_own') then
    create policy select_own on chat_public.batches for select to chat_user using (owner_id = chat_public.current_user_id());
  end if;
  if pg_temp.missing_policy('chat_public.batch_items', 'select_own') then
    create policy select_own on chat_public.batch_items for select to chat_user using (
      exists (select 1 from chat_public.batches b where b.id = batch_id and b.owner_id = chat_public.current_user_id()));
  end if;
end $$;

-- Operators read every table but the secret ones; the worker reads every table (operators configure hooks, MCP
-- servers and model configs as the database owner).
do $$
declare
  v_table regclass;
begin
  foreach v_table in array array[
    'chat_public.users', 'chat_public.chats', 'chat_public.chat_messages', 'chat_public.chat_queued_messages',
    'chat_public.structured_output_requests', 'chat_public.batches', 'chat_public.batch_items',
    'chat_private.model_configs', 'chat_private.chat_leases', 'chat_private.turn_progress',
    'chat_private.message_internals', 'chat_private.experiments', 'chat_private.settings',
    'chat_private.idempotency_keys', 'chat_private.transition_rules', 'chat_private.stop_hooks',
    'chat_private.mcp_servers', 'chat_private.worker_config_version']::regclass[] loop
    if pg_temp.missing_policy(v_table, 'select_all_operator') then
      execute format('create policy select_all_operator on %s for select to chat_operator using (true)', v_table);
    end if;
  end loop;
  foreach v_table in array array[
    'chat_public.users', 'chat_public.chats', 'chat_public.chat_messages', 'chat_public.chat_queued_messages',
    'chat_public.structured_output_requests', 'chat_public.batches', 'chat_public.batch_items',
    'chat_private.model_configs', 'chat_private.model_config_secrets', 'chat_private.chat_leases',
    'chat_private.turn_progress', 'chat_private.message_internals', 'chat_private.experiments',
    'chat_private.settings', 'chat_private.idempotency_keys', 'chat_private.transition_rules',
    'chat_private.stop_hooks', 'chat_private.stop_hook_secrets', 'chat_private.mcp_servers',
    'chat_private.mcp_server_secrets', 'chat_private.worker_config_version']::regclass[] loop
    if pg_temp.missing_policy(v_table, 'select_all_worker') then
      execute format('create policy select_all_worker on %s for select to chat_worker using (true)', v_table);
    end if;
  end loop;
end $$;

-- GRANT takes no table lock and re-granting changes nothing, so these need no guard. Anonymous requests read the
-- client tables under RLS (no policy for chat_anonymous, so zero rows) instead of failing with a permission error.
grant select on chat_public.users, chat_public.chats, chat_public.chat_messages, chat_public.chat_queued_messages,
  chat_public.structured_output_requests to chat_user, chat_operator, chat_worker, chat_anonymous;
grant select on chat_public.batches, chat_public.batch_items to chat_user, chat_operator, chat_worker;
grant select on chat_private.model_configs, chat_private.chat_leases, chat_private.turn_progress,
  chat_private.message_internals, chat_private.experiments, chat_private.settings, chat_private.idempotency_keys,
  chat_private.transition_rules, chat_private.stop_hooks, chat_private.mcp_servers,
  chat_private.worker_config_version to chat_operator, chat_worker;
grant select on chat_private.model_config_secrets, chat_private.stop_hook_secrets, chat_private.mcp_server_secrets
  to chat_worker;

-- Triggers (were in sql/020, 095 and 120). Order prefixes: _100_ stamps and touches, _200_ guards, _500_ fences and
-- versions, _900_ side effects (enqueue, batch progress, cache version).
do $$
declare
  v_table regclass;
begin
  if pg_temp.missing_trigger('chat_public.chat_messages', '_100_stamp_revision') then
    create trigger _100_stamp_revision before insert or update on chat_public.chat_messages
      for each row execute function chat_private.tg_chat_messages__stamp_revision();
  end if;
  -- WHEN clauses: only rows that are or were receipts call the function (ordinary rows have nothing to check).
  if pg_temp.missing_trigger('chat_public.chat_messages', '_200_guard_receipts_insert') then
    create trigger _200_guard_receipts_insert before insert on chat_public.chat_messages
      for each row when (NEW.kind = 'receipt') execute function chat_private.tg_chat_messages__guard_receipts();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_messages', '_200_guard_receipts_update') then
    create trigger _200_guard_receipts_update before update on chat_public.chat_messages
      for each row when (OLD.kind = 'receipt' or NEW.kind = 'receipt')
      execute function chat_private.tg_chat_messages__guard_receipts();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_messages', '_500_fence_history_update') then
    create trigger _500_fence_history_update after update on chat_public.chat_messages
      referencing old table as old_rows new table as new_rows for each statement
      execute function chat_private.tg_chat_messages__fence_update();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_messages', '_500_fence_history_delete') then
    create trigger _500_fence_history_delete after delete on chat_public.chat_messages
      referencing old table as old_rows for each statement
      execute function chat_private.tg_chat_messages__fence_delete();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_queued_messages', '_500_bump_queue_version_insert') then
    create trigger _500_bump_queue_version_insert after insert on chat_public.chat_queued_messages
      referencing new table as changed_rows for each statement
      execute function chat_private.tg_chat_queued_messages__bump_queue_version();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_queued_messages', '_500_bump_queue_version_update') then
    create trigger _500_bump_queue_version_update after update on chat_public.chat_queued_messages
      referencing new table as changed_rows for each statement
      execute function chat_private.tg_chat_queued_messages__bump_queue_version();
  end if;
  if pg_temp.missing_trigger('chat_public.chat_queued_messages', '_500_bump_queue_version_delete') then
    create trigger _500_bump_queue_version_delete after delete on chat_public.chat_queued_messages
      referencing old table as changed_rows for each statement
      execute function chat_private.tg_chat_queued_messages__bump_queue_version();
  end if;
  -- The WHEN clause keeps the many updates that set the status without changing it from calling the function.
  if pg_temp.missing_trigger('chat_public.chats', '_900_enqueue_run') then
    create trigger _900_enqueue_run after update of status on chat_public.chats
      for each row when (NEW.status in ('running', 'interrupting') and OLD.status is distinct from NEW.status)
      execute function chat_private.tg_chats__enqueue_run();
  end if;
  if pg_temp.missing_trigger('chat_private.turn_progress', '_900_enqueue_run') then
    create trigger _900_enqueue_run after insert on chat_private.turn_progress
      for each row execute function chat_private.tg_turn_progress__enqueue_run();
  end if;
  if pg_temp.missing_trigger('chat_public.chats', '_100_touch') then
    create trigger _100_touch before update on chat_public.chats
      for each row execute function chat_private.tg_chats__touch();
  end if;
  if pg_temp.missing_trigger('chat_public.structured_output_requests', '_900_finish_batch_item') then
    create trigger _900_finish_batch_item after update of status on chat_public.structured_output_requests
      for each row when (OLD.status = 'pending' and NEW.status <> 'pending')
      execute function chat_private.tg_structured_output_requests__finish_batch_item();
  end if;
  foreach v_table in array array[
    'chat_private.settings', 'chat_private.model_configs', 'chat_private.model_config_secrets',
    'chat_private.stop_hooks', 'chat_private.stop_hook_secrets']::regclass[] loop
    if pg_temp.missing_trigger(v_table, '_900_worker_config_version') then
      execute format('create trigger _900_worker_config_version after insert or update or delete or truncate on %s '
                     'for each statement execute function chat_private.tg_worker_config__bump()', v_table);
    end if;
  end loop;
end $$;

-- Seed rows (were in sql/010, 040, 075, 090, 100 and 110). The allowed-transition table has one row per
-- (transition, state), a state being the chat's status or `archived`; every transition function consults it
-- through chat_private.begin_transition, and test/db/transition-rules.test.ts exercises every row.
insert into chat_private.experiments (name, enabled, description) values
  ('chat-structured-output', false,
   'Accept new structured-output requests (response_format json_schema). Accepted work keeps running when switched off.')
on conflict (name) do update set description = excluded.description;

insert into chat_private.settings (name, value, description) values
  ('max_steps_per_turn', '200', 'Assistant steps a single turn may take before it stops.'),
  ('max_recoveries_per_turn', '3', 'Lease expiries (worker crashes) a turn survives before it fails with generation_failed.'),
  ('lease_seconds', '30', 'Length of a runner lease; the worker renews it by heartbeat.'),
  ('requires_action_timeout_seconds', '300', 'How long a chat waits for client tool results before they are cancelled.'),
  ('finalizer_repairs', '2', 'Repairs allowed after the first rejected finalization attempt.')
on conflict (name) do update set description = excluded.description;

insert into chat_private.model_configs (id, provider, model, context_limit, is_default)
values ('scripted', 'scripted', 'scripted-demo', 32000, true)
on conflict (id) do nothing;

insert into chat_private.settings (name, value, description) values
  ('retry_max_attempts', '5', 'Provider attempts per step (the first try included) before a retryable error ends the turn.'),
  ('retry_initial_delay_ms', '1000', 'Backoff before the second provider attempt; doubles per attempt.'),
  ('retry_max_delay_ms', '30000', 'Upper bound of the provider retry backoff.')
on conflict (name) do update set description = excluded.description;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('send_message', 'waiting', true, 'running: the message starts a turn'),
  ('send_message', 'running', true, 'queue: queued; interrupt: queued at the head, interrupting'),
  ('send_message', 'interrupting', true, 'queued (at the head with interrupt)'),
  ('send_message', 'requires_action', true, 'queue: queued; interrupt: pending calls cancelled, queued at the head, running'),
  ('send_message', 'error', true, 'running: queued behind older queued messages, then the queue head starts a turn'),
  ('send_message', 'archived', false, 'refused (CHARC)'),
  ('edit_message', 'waiting', true, 'running: suffix and queue discarded, replacement starts a turn'),
  ('edit_message', 'running', true, 'running: the running turn is fenced out'),
  ('edit_message', 'interrupting', true, 'running'),
  ('edit_message', 'requires_action', true, 'running'),
  ('edit_message', 'error', true, 'running'),
  ('edit_message', 'archived', false, 'refused (CHARC)'),
  ('delete_queued_message', 'waiting', true, 'unchanged'),
  ('delete_queued_message', 'running', true, 'unchanged; a structured request gets a queue_deleted receipt'),
  ('delete_queued_message', 'interrupting', true, 'unchanged'),
  ('delete_queued_message', 'requires_action', true, 'unchanged'),
  ('delete_queued_message', 'error', true, 'unchanged'),
  ('delete_queued_message', 'archived', false, 'refused (CHARC)'),
  ('promote_queued_message', 'waiting', true, 'running: the message starts a turn'),
  ('promote_queued_message', 'running', true, 'interrupting: the message moves to the head of the queue'),
  ('promote_queued_message', 'interrupting', true, 'interrupting: the message moves to the head of the queue'),
  ('promote_queued_message', 'requires_action', true, 'running: pending calls cancelled, the message moves to the head of the queue'),
  ('promote_queued_message', 'error', true, 'running: the message starts a turn'),
  ('promote_queued_message', 'archived', false, 'refused (CHARC)'),
  ('interrupt', 'waiting', true, 'no-op'),
  ('interrupt', 'running', true, 'interrupting'),
  ('interrupt', 'interrupting', true, 'no-op'),
  ('interrupt', 'requires_action', true, 'running: pending calls answered with cancellations, the turn continues'),
  ('interrupt', 'error', true, 'no-op'),
  ('interrupt', 'archived', false, 'refused (CHARC)'),
  ('submit_tool_results', 'waiting', false, 'refused (CHTRN)'),
  ('submit_tool_results', 'running', false, 'refused (CHTRN)'),
  ('submit_tool_results', 'interrupting', false, 'refused (CHTRN)'),
  ('submit_tool_results', 'requires_action', true, 'running'),
  ('submit_tool_results', 'error', false, 'refused (CHTRN)'),
  ('submit_tool_results', 'archived', false, 'refused (CHARC)'),
  ('archive', 'waiting', true, 'archived'),
  ('archive', 'running', false, 'refused (CHTRN)'),
  ('archive', 'interrupting', false, 'refused (CHTRN)'),
  ('archive', 'requires_action', false, 'refused (CHTRN)'),
  ('archive', 'error', true, 'archived'),
  ('archive', 'archived', true, 'no-op'),
  ('unarchive', 'waiting', true, 'no-op'),
  ('unarchive', 'running', true, 'no-op'),
  ('unarchive', 'interrupting', true, 'no-op'),
  ('unarchive', 'requires_action', true, 'no-op'),
  ('unarchive', 'error', true, 'no-op'),
  ('unarchive', 'archived', true, 'not archived, status kept'),
  ('set_plan_mode', 'waiting', true, 'flag set'),
  ('set_plan_mode', 'running', true, 'flag set; applies from the next step'),
  ('set_plan_mode', 'interrupting', true, 'flag set'),
  ('set_plan_mode', 'requires_action', true, 'flag set'),
  ('set_plan_mode', 'error', true, 'flag set'),
  ('set_plan_mode', 'archived', false, 'refused (CHARC)'),
  ('acquire_lease', 'waiting', false, 'refused (CHTRN): nothing to run'),
  ('acquire_lease', 'running', true, 'lease taken, generation_attempt + 1'),
  ('acquire_lease', 'interrupting', true, 'lease taken, generation_attempt + 1'),
  ('acquire_lease', 'requires_action', false, 'refused (CHTRN): waiting for the client'),
  ('acquire_lease', 'error', false, 'refused (CHTRN)'),
  ('acquire_lease', 'archived', false, 'refused (CHARC)'),
  ('commit_step', 'waiting', false, 'refused (CHTRN)'),
  ('commit_step', 'running', true, 'running'),
  ('commit_step', 'interrupting', false, 'refused (CHTRN): the runner must finish the interruption'),
  ('commit_step', 'requires_action', false, 'refused (CHTRN)'),
  ('commit_step', 'error', false, 'refused (CHTRN)'),
  ('commit_step', 'archived', false, 'refused (CHARC)'),
  ('enter_requires_action', 'waiting', false, 'refused (CHTRN)'),
  ('enter_requires_action', 'running', true, 'requires_action with a deadline'),
  ('enter_requires_action', 'interrupting', false, 'refused (CHTRN)'),
  ('enter_requires_action', 'requires_action', false, 'refused (CHTRN)'),
  ('enter_requires_action', 'error', false, 'refused (CHTRN)'),
  ('enter_requires_action', 'archived', false, 'refused (CHARC)'),
  ('finish_turn', 'waiting', false, 'refused (CHTRN)'),
  ('finish_turn', 'running', true, 'waiting, or running with the queue head promoted'),
  ('finish_turn', 'interrupting', false, 'refused (CHTRN): the runner must finish the interruption'),
  ('finish_turn', 'requires_action', false, 'refused (CHTRN)'),
  ('finish_turn', 'error', false, 'refused (CHTRN)'),
  ('finish_turn', 'archived', false, 'refused (CHARC)'),
  ('finish_error', 'waiting', false, 'refused (CHTRN)'),
  ('finish_error', 'running', true, 'error; the active request fails with generation_failed'),
  ('finish_error', 'interrupting', true, 'error; the active request fails with generation_failed'),
  ('finish_error', 'requires_action', false, 'refused (CHTRN): no runner holds a waiting chat'),
  ('finish_error', 'error', false, 'refused (CHTRN)'),
  ('finish_error', 'archived', false, 'refused (CHARC)'),
  ('finish_interruption', 'waiting', false, 'refused (CHTRN)'),
  ('finish_interruption', 'running', false, 'refused (CHTRN)'),
  ('finish_interruption', 'interrupting', true, 'waiting, or running with the queue head promoted'),
  ('finish_interruption', 'requires_action', false, 'refused (CHTRN)'),
  ('finish_interruption', 'error', false, 'refused (CHTRN)'),
  ('finish_interruption', 'archived', false, 'refused (CHARC)'),
  ('cancel_requires_action', 'waiting', false, 'refused (CHTRN)'),
  ('cancel_requires_action', 'running', false, 'refused (CHTRN)'),
  ('cancel_requires_action', 'interrupting', false, 'refused (CHTRN)'),
  ('cancel_requires_action', 'requires_action', true, 'running: pending calls answered with cancellations'),
  ('cancel_requires_action', 'error', false, 'refused (CHTRN)'),
  ('cancel_requires_action', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('record_retry_state', 'waiting', false, 'refused (CHTRN)'),
  ('record_retry_state', 'running', true, 'running: retry_state set or cleared, generation_attempt + 1 when set'),
  ('record_retry_state', 'interrupting', false, 'refused (CHTRN): the runner must finish the interruption'),
  ('record_retry_state', 'requires_action', false, 'refused (CHTRN)'),
  ('record_retry_state', 'error', false, 'refused (CHTRN)'),
  ('record_retry_state', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('operator_release_lease', 'waiting', false, 'refused (CHTRN): nothing runs'),
  ('operator_release_lease', 'running', true, 'unchanged: lease released, chat re-enqueued'),
  ('operator_release_lease', 'interrupting', true, 'unchanged: lease released, chat re-enqueued'),
  ('operator_release_lease', 'requires_action', false, 'refused (CHTRN): no runner holds a waiting chat'),
  ('operator_release_lease', 'error', false, 'refused (CHTRN)'),
  ('operator_release_lease', 'archived', false, 'refused (CHARC)'),
  ('operator_cancel_request', 'waiting', true, 'unchanged: operator_canceled receipt'),
  ('operator_cancel_request', 'running', true, 'unchanged, or interrupting when it is the active turn''s request'),
  ('operator_cancel_request', 'interrupting', true, 'unchanged: operator_canceled receipt'),
  ('operator_cancel_request', 'requires_action', true, 'unchanged, or the turn ends when it is the active request'),
  ('operator_cancel_request', 'error', true, 'unchanged: operator_canceled receipt'),
  ('operator_cancel_request', 'archived', true, 'unchanged: operator_canceled receipt'),
  ('operator_retry_chat', 'waiting', false, 'refused (CHTRN): nothing to retry'),
  ('operator_retry_chat', 'running', false, 'refused (CHTRN)'),
  ('operator_retry_chat', 'interrupting', false, 'refused (CHTRN)'),
  ('operator_retry_chat', 'requires_action', false, 'refused (CHTRN)'),
  ('operator_retry_chat', 'error', true, 'running: the queue head, else the last user input, runs as a new turn'),
  ('operator_retry_chat', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('compact_chat', 'waiting', true, 'unchanged: compaction runs before the next model step (the next turn)'),
  ('compact_chat', 'running', true, 'unchanged: compaction runs before the running turn''s next model step'),
  ('compact_chat', 'interrupting', false, 'refused (CHTRN): the turn is ending'),
  ('compact_chat', 'requires_action', true, 'unchanged: compaction runs once the turn resumes'),
  ('compact_chat', 'error', true, 'unchanged: compaction runs before the next model step (the next turn)'),
  ('compact_chat', 'archived', false, 'refused (CHARC)'),
  ('compact_history', 'waiting', false, 'refused (CHTRN)'),
  ('compact_history', 'running', true, 'running: older rows compressed, summary and marker inserted'),
  ('compact_history', 'interrupting', false, 'refused (CHTRN): the runner must finish the interruption'),
  ('compact_history', 'requires_action', false, 'refused (CHTRN)'),
  ('compact_history', 'error', false, 'refused (CHTRN)'),
  ('compact_history', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('set_mcp_servers', 'waiting', true, 'flag set'),
  ('set_mcp_servers', 'running', true, 'flag set; applies from the next run'),
  ('set_mcp_servers', 'interrupting', true, 'flag set'),
  ('set_mcp_servers', 'requires_action', true, 'flag set'),
  ('set_mcp_servers', 'error', true, 'flag set'),
  ('set_mcp_servers', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;
