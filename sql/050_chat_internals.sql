-- Building blocks of the transitions. None is exposed. A name with a leading _ marks a helper that takes the chat
-- row lock for a transition (_begin_transition, _begin_worker_transition: one lock and one snapshot_version bump per
-- transition) or assumes its caller holds it; the others check input, read, or keep idempotency results.

comment on type chat_public.chat_input_result is
  E'What an input transition created: the message that started a turn or the queued message, the structured request id minted for it, and any receipts it committed (edit supersession, queue deletion) in id order.';

-- Neither security definer nor with a SET clause, and stable (an enum's text form is), so PostgreSQL inlines it into
-- the statements that call it.
create or replace function chat_private.chat_state(p_chat chat_public.chats) returns text as $$
  select case when (p_chat).archived then 'archived' else (p_chat).status::text end;
$$ language sql stable;
select chat_private.grant_execute('chat_private.chat_state(chat_public.chats)', '{}');

-- The transition rule of p_transition from p_from_state, or null for an unknown transition: the one lookup of
-- chat_private.transition_rules. Each locking statement of a transition calls it in its qual, so the rule is checked
-- against the chat row as it is after any lock wait (a qual is evaluated again on the newest row version).
-- PL/pgSQL without a SET clause (its callers pin search_path): the plan is kept for the session and a call saves and
-- restores no setting.
create or replace function chat_private._transition_rule(p_transition text, p_from_state text)
returns chat_private.transition_rules as $$
begin
  return (select r from chat_private.transition_rules r where r.transition = p_transition and r.from_state = p_from_state);
end;
$$ language plpgsql stable;
select chat_private.grant_execute('chat_private._transition_rule(text, text)', '{}');

-- The status a transition moves the chat to, read from its rule (to_state): with p_to_state null the rule's only
-- target, otherwise p_to_state, which the rule must list (where an argument or the queue decides between targets).
-- A transition that would move the chat anywhere else is a bug in the rules or in the function: XX000.
create or replace function chat_private._to_state(p_transition text, p_from_state text, p_to_state text default null)
returns chat_public.chat_status as $$
declare
  v_targets text[] := (chat_private._transition_rule(p_transition, p_from_state)).to_state;
begin
  if p_to_state is null and cardinality(v_targets) = 1 then
    return v_targets[1]::chat_public.chat_status;
  end if;
  if p_to_state is null or not p_to_state = any(v_targets) then
    raise exception '% from % cannot lead to % (transition_rules: %)', p_transition, p_from_state,
      coalesce(p_to_state, 'an unnamed state'), v_targets using errcode = 'XX000';
  end if;
  return p_to_state::chat_public.chat_status;
end;
$$ language plpgsql stable;
select chat_private.grant_execute('chat_private._to_state(text, text, text)', '{}');

-- The one live-lease predicate: a lease row is live until its expires_at, not at it. Everything that asks whether a
-- lease holds (_lease_is_live, the sweep, the operator views) asks this, so they cannot disagree at the boundary.
-- SQL without a SET clause, so PostgreSQL inlines it into the statements that call it.
create or replace function chat_private.lease_row_is_live(p_expires_at timestamptz) returns boolean as $$
  select p_expires_at > now();
$$ language sql stable;
select chat_private.grant_execute('chat_private.lease_row_is_live(timestamptz)', '{chat_operator, chat_worker}');

-- The one worker-process liveness predicate, with the lease's boundary: a worker that reported itself alive until
-- expires_at (report_worker_alive) is dead from that instant on, as a lease is, so a job and a lease held by the
-- same process lapse together. Inlined as lease_row_is_live is.
create or replace function chat_private.worker_row_is_live(p_expires_at timestamptz) returns boolean as $$
  select p_expires_at > now();
$$ language sql stable;
select chat_private.grant_execute('chat_private.worker_row_is_live(timestamptz)', '{chat_operator, chat_worker}');

-- The live-lease check: p_runner_id (any runner when null) holds an unexpired lease on the chat. A worker
-- transition's fence holds only while its runner does; acquire_lease refuses while any runner does. Callers ask in
-- a statement of their own after the chat lock is held, so a lease changed by a transaction they waited for is seen.
create or replace function chat_private._lease_is_live(p_chat_id uuid, p_runner_id uuid) returns boolean as $$
begin
  return exists (select 1 from chat_private.chat_leases l
                 where l.chat_id = p_chat_id and (p_runner_id is null or l.runner_id = p_runner_id)
                   and chat_private.lease_row_is_live(l.expires_at));
end;
$$ language plpgsql stable;
select chat_private.grant_execute('chat_private._lease_is_live(uuid, uuid)', '{}');

-- Why p_transition is refused on p_chat (locked by the caller): XX000 for an unknown transition, CHARC when the
-- chat is archived, CHTRN otherwise. Returns when the transition is allowed after all (a commit the caller's lock
-- waited for allowed it). The one diagnosis of the rule's refusals, for _begin_transition and
-- _lock_for_worker_transition.
create or replace function chat_private._check_transition_rule(p_chat chat_public.chats, p_transition text) returns void as $$
declare
  v_state text := chat_private.chat_state(p_chat);
  v_allowed boolean := (chat_private._transition_rule(p_transition, v_state)).allowed;
begin
  if v_allowed is null then
    raise exception 'unknown transition %', p_transition using errcode = 'XX000';
  end if;
  if not v_allowed then
    if v_state = 'archived' then
      raise exception 'chat is archived' using errcode = 'CHARC';
    end if;
    raise exception '% is not allowed while the chat is %', p_transition, v_state using errcode = 'CHTRN',
      detail = v_state;
  end if;
end;
$$ language plpgsql stable;
select chat_private.grant_execute('chat_private._check_transition_rule(chat_public.chats, text)', '{}');

-- Locks the chat, checks the allowed-transition table, bumps snapshot_version once. p_owner hides other users' chats.
-- The allowed case is one UPDATE: it waits for the row lock, then checks the rule against the row as it is after
-- the wait, bumps and returns it. Any refusal is diagnosed by the locking read below, in the original order (CHNTF,
-- then _check_transition_rule's); should a commit between the two make the transition allowed after all, the
-- transition goes on and bumps as before.
create or replace function chat_private._begin_transition(p_chat_id uuid, p_transition text, p_owner uuid default null)
returns chat_public.chats as $$
declare
  v_chat chat_public.chats;
begin
  update chat_public.chats c set snapshot_version = c.snapshot_version + 1
  where c.id = p_chat_id and (p_owner is null or c.owner_id = p_owner)
    and (chat_private._transition_rule(p_transition, chat_private.chat_state(c))).allowed
  returning * into v_chat;
  if found then
    return v_chat;
  end if;
  select * into v_chat from chat_public.chats where id = p_chat_id for update;
  if not found or (p_owner is not null and v_chat.owner_id <> p_owner) then
    raise exception 'chat not found' using errcode = 'CHNTF';
  end if;
  perform chat_private._check_transition_rule(v_chat, p_transition);
  update chat_public.chats set snapshot_version = snapshot_version + 1 where id = p_chat_id returning * into v_chat;
  return v_chat;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._begin_transition(uuid, text, uuid)', '{}');

-- The one owner of a worker transition's lock and checks: locks the chat row (FOR NO KEY UPDATE, as the UPDATE that
-- follows takes it) where the fence's versions and the transition rule hold on the row as it is after any lock wait
-- (a qual is evaluated again on the newest row version), then checks the lease in a statement of its own, whose
-- snapshot is taken with the lock held, so a lease changed by a transaction it waited for is seen. It writes
-- nothing: the caller's one UPDATE bumps snapshot_version (or _fence_history moves the fence and bumps in one), so a
-- transition writes one chat row version.
--
-- A fenced transition (p_runner_id given) checks the fence before anything else, so a stale runner always sees
-- CHFNC whatever the state: CHNTF, then CHFNC (versions or lease), then the rule (_check_transition_rule). With
-- p_runner_id null (acquire_lease) there is no fence: the rule, then CHLSD while any runner's lease is live.
-- acquire_lease, _begin_worker_transition and finish_turn lock through here; nothing else states these checks.
create or replace function chat_private._lock_for_worker_transition(p_chat_id uuid, p_transition text,
  p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint) returns void as $$
declare
  v_chat chat_public.chats;
begin
  perform 1 from chat_public.chats c
  where c.id = p_chat_id
    and (p_runner_id is null or (c.history_version = p_history_version and c.generation_attempt = p_generation_attempt))
    and (chat_private._transition_rule(p_transition, chat_private.chat_state(c))).allowed
  for no key update;
  if not found then
    select * into v_chat from chat_public.chats where id = p_chat_id for no key update;
    if not found then
      raise exception 'chat not found' using errcode = 'CHNTF';
    end if;
    if p_runner_id is not null and (v_chat.history_version is distinct from p_history_version
       or v_chat.generation_attempt is distinct from p_generation_attempt
       or not chat_private._lease_is_live(p_chat_id, p_runner_id)) then
      raise exception 'fence lost: the chat changed or the lease passed to another runner' using errcode = 'CHFNC';
    end if;
    perform chat_private._check_transition_rule(v_chat, p_transition);
  end if;
  if p_runner_id is null then
    if chat_private._lease_is_live(p_chat_id, null) then
      raise exception 'another runner holds the lease' using errcode = 'CHLSD';
    end if;
  elsif not chat_private._lease_is_live(p_chat_id, p_runner_id) then
    raise exception 'fence lost: the chat changed or the lease passed to another runner' using errcode = 'CHFNC';
  end if;
end;
$$ language plpgsql volatile;
select chat_private.grant_execute('chat_private._lock_for_worker_transition(uuid, text, uuid, bigint, bigint)', '{}');

-- Locks the chat for a fenced worker transition (_lock_for_worker_transition) and bumps snapshot_version once.
-- p_moves_history: the caller inserts history rows next (not receipts); then _fence_history(chat, true) bumps
-- snapshot_version and moves the fence in one UPDATE: one chat row version for the transition, not the bump's and
-- the fence's, while the fence keeps its one writer.
create or replace function chat_private._begin_worker_transition(
  p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint,
  p_moves_history boolean default false)
returns chat_public.chats as $$
declare
  v_chat chat_public.chats;
begin
  perform chat_private._lock_for_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version,
                                                   p_generation_attempt);
  if p_moves_history then
    return chat_private._fence_history(p_chat_id, true);
  end if;
  update chat_public.chats set snapshot_version = snapshot_version + 1 where id = p_chat_id returning * into v_chat;
  return v_chat;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._begin_worker_transition(uuid, text, uuid, bigint, bigint, boolean)', '{}');

create or replace function chat_private.current_fence(p_chat_id uuid) returns chat_private.fence as $$
begin
  return (select (l.runner_id, c.history_version, c.generation_attempt)::chat_private.fence
          from chat_public.chats c left join chat_private.chat_leases l on l.chat_id = c.id
          where c.id = p_chat_id);
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.current_fence(uuid)', '{chat_worker}');

-- Client input: a non-empty array of text parts (files come with their own issue), bounded in count and size.
create or replace function chat_private.check_input_content(p_content jsonb, p_field text default 'content')
returns void as $$
declare
  v_part jsonb;
  v_index integer := 0;
begin
  if p_content is null or jsonb_typeof(p_content) <> 'array' or jsonb_array_length(p_content) = 0 then
    raise exception '% must be a non-empty array of parts', p_field using errcode = 'CIINV', column = p_field;
  end if;
  if jsonb_array_length(p_content) > 64 then
    raise exception '% has more than 64 parts', p_field using errcode = 'CIINV', column = p_field;
  end if;
  if octet_length(p_content::text) > 262144 then
    raise exception '% is larger than 256 KiB', p_field using errcode = 'CIINV', column = p_field;
  end if;
  for v_part in select e from jsonb_array_elements(p_content) e loop
    if jsonb_typeof(v_part) <> 'object' or v_part ->> 'type' is distinct from 'text' then
      raise exception '%[%].type must be "text"', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s].type', p_field, v_index);
    end if;
    if jsonb_typeof(v_part -> 'text') is distinct from 'string' then
      raise exception '%[%].text must be a string', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s].text', p_field, v_index);
    end if;
    if exists (select 1 from jsonb_object_keys(v_part) k where k not in ('type', 'text')) then
      raise exception '%[%] has unknown fields', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s]', p_field, v_index);
    end if;
    v_index := v_index + 1;
  end loop;
end;
$$ language plpgsql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.check_input_content(jsonb, text)', '{}');

-- Idempotency keys: an advisory lock on (user, key) makes a concurrent repeat wait for the first call's commit.
-- p_request_sha256 identifies the request (chat_private.request_sha256): the same key with another request is
-- refused, as is the same key for another operation.
create or replace function chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text,
  p_request_sha256 text) returns jsonb as $$
declare
  v_row chat_private.idempotency_keys;
begin
  if p_key is null then
    return null;
  end if;
  if length(p_key) not between 1 and 200 then
    raise exception 'idempotency_key must have 1 to 200 characters' using errcode = 'CIINV', column = 'idempotency_key';
  end if;
  perform pg_advisory_xact_lock(hashtextextended(p_owner::text || ':' || p_key, 7010420));
  select * into v_row from chat_private.idempotency_keys where owner_id = p_owner and key = p_key;
  if found and v_row.operation <> p_operation then
    raise exception 'idempotency_key was already used for %', v_row.operation using errcode = 'IDKEY',
      column = 'idempotency_key';
  end if;
  if found and v_row.request_sha256 is distinct from p_request_sha256 and v_row.request_sha256 is not null then
    raise exception 'idempotency_key was already used with a different request' using errcode = 'IDKEY',
      column = 'idempotency_key';
  end if;
  return v_row.result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.idempotent_result(uuid, text, text, text)', '{}');

-- What identifies a request under an idempotency key: its arguments, as one jsonb value (key order and whitespace
-- do not matter).
create or replace function chat_private.request_sha256(p_request jsonb) returns text as $$
begin
  return pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_request::text, 'UTF8')), 'hex');
end;
$$ language plpgsql immutable set search_path to pg_catalog, pg_temp;
select chat_private.grant_execute('chat_private.request_sha256(jsonb)', '{}');

-- Keys chatd mints itself: a batch item's chat (batch:<batch id>:<line>) and a subagent's (agent:<parent>:<tool
-- call>). A client using one could create, under its own key space, the chat a batch item or a spawn then adopts.
create or replace function chat_private.check_client_key(p_key text) returns void as $$
begin
  if p_key like 'batch:%' or p_key like 'agent:%' then
    raise exception 'idempotency_key must not start with batch: or agent: (reserved for keys chatd mints)'
      using errcode = 'CIINV', column = 'idempotency_key';
  end if;
end;
$$ language plpgsql immutable set search_path to pg_catalog, pg_temp;
select chat_private.grant_execute('chat_private.check_client_key(text)', '{}');

-- This and the other small helpers below are PL/pgSQL rather than SQL so that their plans are kept for the session
-- (see chat_private.setting in 010_helpers.sql).
create or replace function chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb,
  p_request_sha256 text) returns void as $$
begin
  insert into chat_private.idempotency_keys (owner_id, key, operation, result, request_sha256)
  select p_owner, p_key, p_operation, p_result, p_request_sha256 where p_key is not null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.remember_result(uuid, text, text, jsonb, text)', '{}');

create or replace function chat_private._insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid,
  p_created_by uuid) returns bigint as $$
declare
  v_id bigint;
begin
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id, created_by)
  values (p_chat_id, 'user', 'both', 'message', p_content, p_request_id, p_created_by)
  returning id into v_id;
  return v_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._insert_input(uuid, jsonb, uuid, uuid)', '{}');

-- Turn closing: the open turn is finished and its lease released. Every way a turn ends (finished, interrupted,
-- failed, replaced by an edit or by the next turn) goes through here; what the chat's status becomes is the caller's.
-- The candidate's value is dropped in the same row version: nothing reads a closed turn's candidate (a success
-- receipt, written before the close, holds its value), and provenance reads the counters, candidate_present among them.
-- One statement for both writes (a data-modifying WITH runs whether or not it is read): it runs at every turn's start
-- and end.
create or replace function chat_private._close_turn(p_chat_id uuid) returns void as $$
begin
  with closed as (
    update chat_private.turn_progress set finished_at = now(), candidate_value = null
    where chat_id = p_chat_id and finished_at is null)
  delete from chat_private.chat_leases where chat_id = p_chat_id;
end;
$$ language plpgsql volatile;
select chat_private.grant_execute('chat_private._close_turn(uuid)', '{}');

create or replace function chat_private._start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid)
returns void as $$
begin
  perform chat_private._close_turn(p_chat_id);
  insert into chat_private.turn_progress (chat_id, input_message_id, structured_output_request_id)
  values (p_chat_id, p_input_message_id, p_request_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._start_turn(uuid, bigint, uuid)', '{}');

create or replace function chat_private._open_turn(p_chat_id uuid) returns chat_private.turn_progress as $$
begin
  return (select t from chat_private.turn_progress t where t.chat_id = p_chat_id and t.finished_at is null);
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._open_turn(uuid)', '{}');

create or replace function chat_private._queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid,
  p_created_by uuid, p_at_head boolean) returns bigint as $$
declare
  v_id bigint;
begin
  insert into chat_public.chat_queued_messages (chat_id, content, structured_output_request_id, created_by, position)
  values (p_chat_id, p_content, p_request_id, p_created_by,
          case when p_at_head then -nextval('chat_public.chat_queued_messages_position')
               else nextval('chat_public.chat_queued_messages_position') end)
  returning id into v_id;
  return v_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._queue_message(uuid, jsonb, uuid, uuid, boolean)', '{}');

-- Moves the head of the queue into history as the input of a new turn. Returns the new message id, or null.
create or replace function chat_private._promote_queue_head(p_chat_id uuid) returns bigint as $$
declare
  v_queued chat_public.chat_queued_messages;
  v_message_id bigint;
begin
  delete from chat_public.chat_queued_messages
  where id = (select id from chat_public.chat_queued_messages where chat_id = p_chat_id order by position limit 1)
  returning * into v_queued;
  if not found then
    return null;
  end if;
  v_message_id := chat_private._insert_input(p_chat_id, v_queued.content, v_queued.structured_output_request_id,
                                            v_queued.created_by);
  perform chat_private._start_turn(p_chat_id, v_message_id, v_queued.structured_output_request_id);
  return v_message_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._promote_queue_head(uuid)', '{}');

-- The only writer of receipts. Idempotent per request id: a request that already has its receipt is left alone
-- and null is returned (recovery after an ambiguous commit calls this again).
create or replace function chat_private._write_receipt(p_request_id uuid, p_status chat_public.structured_output_status,
  p_code text default null, p_message text default null, p_value jsonb default null) returns bigint as $$
declare
  v_request chat_public.structured_output_requests;
begin
  select * into v_request from chat_public.structured_output_requests where id = p_request_id for update;
  if not found then
    raise exception 'structured output request % not found', p_request_id using errcode = 'SONTF';
  end if;
  if v_request.status <> 'pending' then
    return null;
  end if;
  return chat_private._record_receipt(p_request_id, v_request.chat_id, p_status, p_code, p_message, p_value);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._write_receipt(uuid, chat_public.structured_output_status, text, text, jsonb)', '{}');

-- How a request's receipt came about, read when the receipt is written (_record_receipt): the request's turns (one,
-- unless the request never ran), the usage their model calls reported, and the chat's model config. Finalization
-- attempts are the batches judged against the request: rejections, discarded candidates and the current one.
-- SQL, neither security definer nor with a SET clause, so PostgreSQL inlines it into _record_receipt's UPDATE (its
-- one caller, which pins search_path), whose plan PL/pgSQL keeps for the session: no call, no result set stored in
-- between. Each turn's usage is summed by its own index range of the chat's messages (chat_messages_chat), so a
-- receipt costs the same however many messages the table holds.
create or replace function chat_private._receipt_provenance(p_request_id uuid, p_chat_id uuid)
returns table (finalization_attempts integer, model_steps integer, model_config_id text, provider text, model text,
               input_tokens bigint, output_tokens bigint, started_at timestamptz) as $$
  with turns as (
    select t.* from chat_private.turn_progress t where t.structured_output_request_id = p_request_id
  ), usage as (
    select sum(u.input_tokens)::bigint as input_tokens, sum(u.output_tokens)::bigint as output_tokens
    from turns t
    cross join lateral (
      select sum((m.usage ->> 'inputTokens')::bigint) as input_tokens, sum((m.usage ->> 'outputTokens')::bigint) as output_tokens
      from chat_public.chat_messages m
      where m.chat_id = t.chat_id and m.id > coalesce(t.input_message_id, 0) and m.usage is not null
        and m.created_at >= t.started_at and (t.finished_at is null or m.created_at <= t.finished_at)) u
  )
  select coalesce((select sum(t.rejected_batches + t.invalidations + case when t.candidate_present then 1 else 0 end)
                   from turns t), 0)::integer,
         coalesce((select sum(t.steps) from turns t), 0)::integer,
         c.model_config_id, mc.provider, mc.model, u.input_tokens, u.output_tokens,
         (select min(t.started_at) from turns t)
  from chat_public.chats c
  left join chat_private.model_configs mc on mc.id = c.model_config_id
  cross join usage u
  where c.id = p_chat_id;
$$ language sql stable;
select chat_private.grant_execute('chat_private._receipt_provenance(uuid, uuid)', '{}');

-- _write_receipt's writes, for a request its caller has locked (FOR UPDATE) and found pending in this transaction:
-- the receipt row, then the request's final state. finish_turn calls it directly, having locked the request in
-- the same statement that reads the open turn; everything else goes through _write_receipt.
create or replace function chat_private._record_receipt(p_request_id uuid, p_chat_id uuid,
  p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) returns bigint as $$
declare
  v_output jsonb;
  v_text text;
  v_message text;
  v_id bigint;
begin
  if p_status = 'succeeded' then
    if p_value is null then
      raise exception 'a success receipt needs a value (JSON null is the jsonb value ''null'')' using errcode = 'SONCD';
    end if;
    v_output := jsonb_build_object('request_id', p_request_id, 'status', p_status, 'value', p_value);
    v_text := p_value::text;
  else
    v_message := left(coalesce(p_message, case p_code
      when 'not_produced' then 'The model finished without producing the structured output.'
      when 'validation_exhausted' then 'The model did not produce a valid structured output within its repair budget.'
      when 'refused' then 'The model refused to produce the structured output.'
      when 'generation_failed' then 'The turn failed before the structured output was produced.'
      when 'configuration_error' then 'The structured output request cannot run with this configuration.'
      when 'interrupted' then 'The structured output request was interrupted.'
      when 'superseded' then 'The structured output request was superseded by an edit.'
      when 'queue_deleted' then 'The queued structured output request was deleted.'
      when 'operator_canceled' then 'An operator canceled the structured output request.'
      else 'The structured output request did not succeed.' end), 2000);
    v_output := jsonb_build_object('request_id', p_request_id, 'status', p_status,
                                   'error', jsonb_build_object('code', p_code, 'message', v_message));
    v_text := v_message;
  end if;
  perform set_config('chatd.writing_receipt', 'on', true);
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id,
                                         structured_output)
  values (p_chat_id, 'assistant', 'user', 'receipt', jsonb_build_array(jsonb_build_object('type', 'text', 'text', v_text)),
          p_request_id, v_output)
  returning id into v_id;
  perform set_config('chatd.writing_receipt', '', true);
  update chat_public.structured_output_requests r
  set status = p_status, error_code = p_code, error_message = v_message, receipt_message_id = v_id, finished_at = now(),
      finalization_attempts = p.finalization_attempts, model_steps = p.model_steps, model_config_id = p.model_config_id,
      provider = p.provider, model = p.model, input_tokens = p.input_tokens, output_tokens = p.output_tokens,
      started_at = p.started_at
  from chat_private._receipt_provenance(p_request_id, p_chat_id) p
  where r.id = p_request_id;
  return v_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._record_receipt(uuid, uuid, chat_public.structured_output_status, text, text, jsonb)', '{}');

-- Answers the client tool calls the chat waits on with synthetic cancellations (a fencing history insert) and resumes
-- the turn in p_status (the calling transition's target, chat_private._to_state). The status changes in the same
-- UPDATE that clears the deadline: the chats CHECK ties requires_action to a deadline, so clearing the deadline alone
-- while the chat is still requires_action is refused (23514).
create or replace function chat_private._cancel_pending_calls(p_chat_id uuid, p_reason text,
  p_status chat_public.chat_status) returns void as $$
declare
  v_calls jsonb;
begin
  select pending_tool_calls into v_calls from chat_public.chats where id = p_chat_id;
  if jsonb_array_length(v_calls) > 0 then
    insert into chat_public.chat_messages (chat_id, role, visibility, kind, content)
    select p_chat_id, 'tool', 'both', 'message', jsonb_agg(jsonb_build_object(
      'type', 'tool-result', 'tool_call_id', c ->> 'tool_call_id', 'tool_name', c ->> 'tool_name',
      'result', jsonb_build_object('error', p_reason), 'is_error', true))
    from jsonb_array_elements(v_calls) c;
  end if;
  update chat_public.chats set status = p_status, pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = p_chat_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._cancel_pending_calls(uuid, text, chat_public.chat_status)', '{}');

-- The pending structured request of the chat's open turn, if any.
create or replace function chat_private._active_request(p_chat_id uuid) returns uuid as $$
begin
  return (select r.id from chat_private.turn_progress t
          join chat_public.structured_output_requests r on r.id = t.structured_output_request_id
          where t.chat_id = p_chat_id and t.finished_at is null and r.status = 'pending');
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._active_request(uuid)', '{}');

-- Ending a turn, the one path of every transition that ends one and then runs the next queued input or lets the
-- chat wait (finish_turn, finish_interruption, operator_cancel_request), in two halves because the ended turn's
-- receipts go between them: after _end_turn, so they carry the transition's revision, and before
-- _promote_after_turn, so they precede the promoted input in the transcript.
--
-- _end_turn: one UPDATE sets the end state, the target of p_transition from p_from_state (the chat's state as the
-- UPDATE reads it when null): running when the queue has a head, else waiting. The queue is read by this UPDATE,
-- whose snapshot is taken with the chat lock held (only chat-lock holders change the queue), never by a statement
-- that may have waited for the lock. p_bump: the caller's transition has not bumped snapshot_version yet, and this
-- UPDATE is its one (finish_turn: one chat row version for the turn's end). Returns the chat as updated.
create or replace function chat_private._end_turn(p_chat_id uuid, p_transition text, p_from_state text, p_bump boolean)
returns chat_public.chats as $$
declare
  v_chat chat_public.chats;
begin
  update chat_public.chats c set snapshot_version = c.snapshot_version + case when p_bump then 1 else 0 end,
    status = chat_private._to_state(p_transition, coalesce(p_from_state, chat_private.chat_state(c)),
      case when exists (select 1 from chat_public.chat_queued_messages q where q.chat_id = p_chat_id)
           then 'running' else 'waiting' end),
    retry_state = null, last_error = null, pending_tool_calls = '[]', requires_action_deadline_at = null
  where c.id = p_chat_id
  returning * into v_chat;
  return v_chat;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._end_turn(uuid, text, text, boolean)', '{}');

-- _promote_after_turn: closes the turn _end_turn ended (p_chat, as it returned it) and, when the end state is
-- running, promotes the queue head, which the caller's chat lock kept there. Returns the chat as it is then: the
-- promoted input moved the fence and the queue version; without a promotion p_chat is current (the receipts in
-- between leave the fence alone).
create or replace function chat_private._promote_after_turn(p_chat chat_public.chats) returns chat_public.chats as $$
declare
  v_chat chat_public.chats;
begin
  perform chat_private._close_turn(p_chat.id);
  if p_chat.status <> 'running' then
    return p_chat;
  end if;
  if chat_private._promote_queue_head(p_chat.id) is null then
    raise exception 'the queue head of chat % vanished under the chat lock', p_chat.id using errcode = 'XX000';
  end if;
  select * into v_chat from chat_public.chats where id = p_chat.id;
  return v_chat;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._promote_after_turn(chat_public.chats)', '{}');

-- Infrastructure failure: the active request fails with generation_failed and the chat enters `error`. A queued
-- structured request would wait there with no receipt for as long as nobody resumes the chat, so each one leaves
-- the queue with its own failed receipt (generation_failed, naming the chat's error) now; plain queued inputs wait
-- until the client sends, promotes or deletes, or chat_private.operator_retry_chat runs the queue head.
create or replace function chat_private._fail_turn(p_chat_id uuid, p_kind text, p_message text) returns void as $$
declare
  v_request uuid := chat_private._active_request(p_chat_id);
  v_queued uuid;
begin
  if v_request is not null then
    perform chat_private._write_receipt(v_request, 'failed', 'generation_failed', p_message);
  end if;
  for v_queued in
    delete from chat_public.chat_queued_messages
    where chat_id = p_chat_id and structured_output_request_id is not null
    returning structured_output_request_id
  loop
    perform chat_private._write_receipt(v_queued, 'failed', 'generation_failed',
      format('The chat entered error (%s) before this queued request ran.', p_kind));
  end loop;
  perform chat_private._close_turn(p_chat_id);
  update chat_public.chats c set status = chat_private._to_state('finish_error', chat_private.chat_state(c)),
    retry_state = null,
    last_error = jsonb_build_object('kind', p_kind, 'message', left(p_message, 2000)),
    pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = p_chat_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._fail_turn(uuid, text, text)', '{}');
