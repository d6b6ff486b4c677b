-- Invariants no caller may bypass: revision stamping, history fencing (receipts exempt), receipt shape and
-- immutability, queue versioning, and enqueueing the worker in the transaction that makes a chat runnable.
-- The triggers that call these functions are migrations (0008 onwards); this file defines what they run.

-- The history fence. A worker transition carries the fence (runner_id, history_version, generation_attempt) it was
-- given and is refused (CHFNC) once it no longer holds. Any change of a chat's history (a row inserted, its content
-- changed, deleted or marked deleted; receipts excepted, they leave the running turn's fence alone) moves the fence:
-- history_version becomes the chat's snapshot_version (the transition making the change) and generation_attempt
-- goes back to 0. This function is the only writer of history_version and the only one that resets the attempt
-- (acquire_lease and record_retry_state start a new attempt on the same history: generation_attempt + 1). The three
-- history triggers below call it for each chat a statement changed; a fence that is current already is left alone,
-- so the first row of a multi-row insert moves it and the others find it current. A failing statement rolls it back.
-- A new chat row's fence is current (the column defaults: snapshot 1, history 1, attempt 0), so a chat created
-- with its first history row needs no fence move.
--
-- p_bump: the caller's transition has not bumped snapshot_version yet, holds the chat lock and will change history
-- next (_begin_worker_transition with p_moves_history): the one UPDATE bumps the snapshot and moves the fence to it,
-- so the chat row gets one version per such transition instead of two, and the history rows' trigger then finds the
-- fence current. Nothing reads the fence before those rows are written, and if they fail the transaction fails.
-- Returns the chat as updated (null when the fence was current already).
-- PL/pgSQL without a SET clause (called by triggers that pin search_path): its plan is kept for the session.
create or replace function chat_private._fence_history(p_chat_id uuid, p_bump boolean default false)
returns chat_public.chats as $$
declare
  v_chat chat_public.chats;
begin
  if p_bump then
    update chat_public.chats c set snapshot_version = c.snapshot_version + 1, history_version = c.snapshot_version + 1,
      generation_attempt = 0
    where c.id = p_chat_id
    returning * into v_chat;
  else
    update chat_public.chats c set history_version = c.snapshot_version, generation_attempt = 0
    where c.id = p_chat_id and (c.history_version is distinct from c.snapshot_version or c.generation_attempt <> 0)
    returning * into v_chat;
  end if;
  return v_chat;
end;
$$ language plpgsql volatile;
select chat_private.grant_execute('chat_private._fence_history(uuid, boolean)', '{}');

-- Revision = the chat's snapshot_version at the time of the write. Application code never writes it.
-- An insert also fences history here (trigger _100_stamp_revision_and_fence_history), from the chat row this trigger
-- reads anyway. Doing it per row rather than in a statement trigger with a transition table costs one chat lookup
-- per inserted row instead of a tuplestore and a join for every statement.
create or replace function chat_private.tg_chat_messages__stamp_revision_and_fence_history() returns trigger as $$
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
    perform chat_private._fence_history(NEW.chat_id);
  end if;
  return NEW;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chat_messages__stamp_revision_and_fence_history()', '{}');

-- Receipts: inserted only by chat_private._write_receipt; identity and content never change afterwards.
-- WHEN clauses: only rows that are or were receipts call the function (ordinary rows have nothing to check).
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
select chat_private.grant_execute('chat_private.tg_chat_messages__guard_receipts()', '{}');

-- PostgreSQL allows no transition tables on `update of column` triggers, so compare old and new rows here.
create or replace function chat_private.tg_chat_messages__fence_update() returns trigger as $$
begin
  perform chat_private._fence_history(changed.chat_id)
  from (select distinct n.chat_id from new_rows n join old_rows o on o.id = n.id
        where n.content is distinct from o.content or n.deleted is distinct from o.deleted) changed;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chat_messages__fence_update()', '{}');

create or replace function chat_private.tg_chat_messages__fence_delete() returns trigger as $$
begin
  perform chat_private._fence_history(changed.chat_id) from (select distinct chat_id from old_rows) changed;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chat_messages__fence_delete()', '{}');

create or replace function chat_private.tg_chat_queued_messages__bump_queue_version() returns trigger as $$
begin
  update chat_public.chats c set queue_version = c.snapshot_version
  from (select chat_id from changed_rows) changed
  where c.id = changed.chat_id and c.queue_version is distinct from c.snapshot_version;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chat_queued_messages__bump_queue_version()', '{}');

-- Transactional outbox: the job that runs a chat is added in the same transaction that makes it runnable
-- (a status change into running/interrupting, or a new turn starting while it is already running).
-- PL/pgSQL so that its plan is kept for the session (see chat_private.setting in 010_helpers.sql).
create or replace function chat_private.enqueue_chat_run(p_chat_id uuid) returns void as $$
begin
  perform chat_private.add_job('chat_run', json_build_object('chat_id', p_chat_id),
    p_job_key => 'chat:' || p_chat_id, p_max_attempts => 1);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.enqueue_chat_run(uuid)', '{}');

-- A chat becomes runnable in two ways, and each has one trigger: its status changes into running or interrupting
-- (here), or a turn starts while it is running (the turn_progress insert below), which is how a new chat is
-- enqueued: create_chat_as inserts it running and starts its first turn in the same transaction. A chat row alone
-- has no turn to run, so its insert enqueues nothing. The WHEN clause keeps the many updates that set the status
-- without changing it from calling the function at all.
create or replace function chat_private.tg_chats__enqueue_run() returns trigger as $$
begin
  perform chat_private.enqueue_chat_run(NEW.id);
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chats__enqueue_run()', '{}');

create or replace function chat_private.tg_turn_progress__enqueue_run() returns trigger as $$
begin
  if exists (select 1 from chat_public.chats where id = NEW.chat_id and status in ('running', 'interrupting')) then
    perform chat_private.enqueue_chat_run(NEW.chat_id);
  end if;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_turn_progress__enqueue_run()', '{}');

-- Every chat row version fires it (four a structured turn). Not security definer and naming nothing through
-- search_path (the one function it calls is qualified), so it has no SET clause, which would save and restore a
-- setting at each row.
create or replace function chat_private.tg_chats__touch() returns trigger as $$
begin
  NEW.updated_at := pg_catalog.now();
  return NEW;
end;
$$ language plpgsql volatile;
select chat_private.grant_execute('chat_private.tg_chats__touch()', '{}');
