-- Worker transitions (executed by chat_worker). Each takes the fence (chat, runner, history_version,
-- generation_attempt), raises CHFNC when it no longer holds, and returns the new fence where the runner goes on.

create or replace function chat_private.acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer default null)
returns chat_private.fence as $$
declare
  v_chat chat_public.chats;
  v_runner uuid := gen_random_uuid();
begin
  -- The lock and the checks (rule, then CHLSD) are _lock_for_worker_transition's; one UPDATE then bumps
  -- snapshot_version and starts the new generation attempt: one row version.
  perform chat_private._lock_for_worker_transition(p_chat_id, 'acquire_lease', null, null, null);
  update chat_public.chats c set snapshot_version = c.snapshot_version + 1, generation_attempt = c.generation_attempt + 1
  where c.id = p_chat_id
  returning * into v_chat;
  -- The default length is read as chat_private.setting_int reads it, without the cost of calling it.
  insert into chat_private.chat_leases (chat_id, runner_id, worker_id, expires_at)
  values (p_chat_id, v_runner, p_worker_id,
          now() + make_interval(secs => coalesce(p_lease_seconds,
            (select (s.value #>> '{}')::integer from chat_private.settings s where s.name = 'lease_seconds'))))
  on conflict (chat_id) do update set runner_id = excluded.runner_id, worker_id = excluded.worker_id,
    acquired_at = now(), expires_at = excluded.expires_at;
  perform chat_private.notify_chat_row(v_chat, 'attempt');
  -- The chat row is final and the lease row is ours (both written above under the chat lock): this is what
  -- current_fence would read.
  return (v_runner, v_chat.history_version, v_chat.generation_attempt)::chat_private.fence;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.acquire_lease(uuid, text, integer) is
  E'Takes the runner lease of a runnable chat with a fresh runner id and starts a new generation attempt. CHLSD when a live lease exists, CHTRN when the chat is not runnable.';
select chat_private.grant_execute('chat_private.acquire_lease(uuid, text, integer)', '{chat_worker}');

-- A heartbeat, not a transition: it touches only the FK-free lease row. The worker renews with renew_leases; this
-- one is kept for the workers of earlier releases during a rolling upgrade (test/migrate/rolling.test.ts).
create or replace function chat_private.renew_lease(p_chat_id uuid, p_runner_id uuid, p_lease_seconds integer default null)
returns boolean as $$
  with renewed as (
    update chat_private.chat_leases
    set expires_at = now() + make_interval(secs => coalesce(p_lease_seconds, chat_private.setting_int('lease_seconds')))
    where chat_id = p_chat_id and runner_id = p_runner_id
    returning 1)
  select exists (select 1 from renewed);
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.renew_lease(uuid, uuid, integer)', '{chat_worker}');

-- The heartbeat of a worker process: the leases of all its runs renewed in one statement, each with its chat's
-- status (an interrupt is seen even when its notification was missed). Like renew_lease, it touches only the lease
-- rows. Per lease (runner_id): renewed is true, or false when the runner no longer holds it (another runner took
-- it, it was released or swept, the chat was deleted), or null when another transaction holds its row (SKIP
-- LOCKED: one busy row neither holds up the renewal of the others nor lets two renewals deadlock; that transaction
-- decides, and the next beat sees what it decided). A null length is the lease_seconds setting.
create or replace function chat_private.renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[])
returns table (runner_id uuid, renewed boolean, status text) as $$
begin
  if cardinality(p_runner_ids) is distinct from cardinality(p_chat_ids) then
    raise exception 'runner_ids must pair with chat_ids' using errcode = 'CIINV', column = 'runner_ids';
  end if;
  if cardinality(p_lease_seconds) is distinct from cardinality(p_chat_ids) then
    raise exception 'lease_seconds must pair with chat_ids' using errcode = 'CIINV', column = 'lease_seconds';
  end if;
  return query
  with wanted as (
    select w.chat_id, w.runner_id, w.lease_seconds
    from unnest(p_chat_ids, p_runner_ids, p_lease_seconds) w (chat_id, runner_id, lease_seconds)),
  held as (
    select l.chat_id, w.lease_seconds from chat_private.chat_leases l
    join wanted w on w.chat_id = l.chat_id and w.runner_id = l.runner_id
    for no key update of l skip locked),
  done as (
    update chat_private.chat_leases l
    set expires_at = now() + make_interval(secs => coalesce(h.lease_seconds, chat_private.setting_int('lease_seconds')))
    from held h
    where l.chat_id = h.chat_id
    returning l.runner_id)
  select w.runner_id,
    case when r.runner_id is not null then true
         -- Still this runner's in the statement's snapshot, so its row was skipped, not lost.
         when exists (select 1 from chat_private.chat_leases l where l.chat_id = w.chat_id and l.runner_id = w.runner_id)
           then null
         else false end,
    c.status::text
  from wanted w
  left join done r on r.runner_id = w.runner_id
  left join chat_public.chats c on c.id = w.chat_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.renew_leases(uuid[], uuid[], integer[]) is
  E'Renews the leases of a worker process''s runs in one statement and returns each chat''s status: renewed is false when the runner lost its lease, null when its row was busy (try again).';
select chat_private.grant_execute('chat_private.renew_leases(uuid[], uuid[], integer[])', '{chat_worker}');

create or replace function chat_private.release_lease(p_chat_id uuid, p_runner_id uuid) returns void as $$
  delete from chat_private.chat_leases where chat_id = p_chat_id and runner_id = p_runner_id;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.release_lease(uuid, uuid)', '{chat_worker}');

-- The kind of a worker-produced row; receipts (and unknown kinds) are refused here: they come only from _write_receipt.
-- It reads no table, so it needs neither security definer nor a SET clause (it runs once per row).
create or replace function chat_private.worker_message_kind(p_item jsonb) returns chat_public.message_kind as $$
begin
  if coalesce(p_item ->> 'kind', 'message') not in ('message', 'control', 'summary') then
    raise exception 'workers cannot insert % rows', p_item ->> 'kind' using errcode = 'RCFRB';
  end if;
  return coalesce(p_item ->> 'kind', 'message')::chat_public.message_kind;
end;
$$ language plpgsql immutable;
select chat_private.grant_execute('chat_private.worker_message_kind(jsonb)', '{}');

-- Inserts worker-produced rows: [{role, content, visibility?, kind?, usage?, internals?}]. Returns the ids in input
-- order. One statement inserts the messages (their statement triggers fire once) and their internals (keyed by the
-- ids in input order; the internals' foreign key is checked at the statement's end, after both). The kind check
-- sits in a subquery that OFFSET 0 keeps from being flattened, so it runs for each element as the INSERT pulls it,
-- before that element's casts and row triggers and after the rows before it: the same element order, and so the
-- same first error, as inserting one element at a time. Ids come from the column's sequence as rows are inserted,
-- so they increase in input order.
create or replace function chat_private._insert_worker_messages(p_chat_id uuid, p_messages jsonb) returns bigint[] as $$
declare
  v_ids bigint[];
begin
  if p_messages is null or jsonb_typeof(p_messages) <> 'array' then
    raise exception 'messages must be an array' using errcode = 'CIINV', column = 'messages';
  end if;
  if jsonb_array_length(p_messages) = 0 then
    return '{}';
  end if;
  with inserted as (
    insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, usage)
    select p_chat_id, (m.item ->> 'role')::chat_public.message_role,
           coalesce(m.item ->> 'visibility', 'both')::chat_public.message_visibility, m.kind, m.item -> 'content',
           m.item -> 'usage'
    from (select e.item, chat_private.worker_message_kind(e.item) as kind
          from jsonb_array_elements(p_messages) e(item) offset 0) m
    returning id),
  ids as (
    select array_agg(id order by id) as ids from inserted),
  internals as (
    insert into chat_private.message_internals (message_id, provider_metadata, finish, finalizer_screening)
    select i.ids[e.n], e.item -> 'internals' -> 'provider_metadata', e.item -> 'internals' -> 'finish',
           e.item -> 'internals' -> 'finalizer_screening'
    from ids i, jsonb_array_elements(p_messages) with ordinality e(item, n)
    where e.item -> 'internals' is not null)
  select i.ids into v_ids from ids i;
  return v_ids;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._insert_worker_messages(uuid, jsonb)', '{}');

-- progress: {"steps": n, "candidate": {"value": V, "step": n, "message_index": i}, "rejection": {"value_rejected": b},
-- "invalidate_candidate": true, "hook_continuation": true}. The worker validated a candidate before passing it;
-- it is recorded in the same transaction as the step that produced it.
create or replace function chat_private._apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[])
returns void as $$
begin
  if p_progress is null or p_progress = '{}'::jsonb then
    return;
  end if;
  if p_progress ? 'candidate' and not (p_progress -> 'candidate' ? 'value') then
    raise exception 'a candidate needs a value' using errcode = 'SONCD';
  end if;
  update chat_private.turn_progress t set
    steps = t.steps + coalesce((p_progress ->> 'steps')::integer, 0),
    rejected_batches = t.rejected_batches + case when p_progress ? 'rejection' then 1 else 0 end,
    value_rejected = t.value_rejected or coalesce((p_progress -> 'rejection' ->> 'value_rejected')::boolean, false),
    hook_continuations = t.hook_continuations + case when (p_progress ->> 'hook_continuation')::boolean then 1 else 0 end,
    invalidations = t.invalidations + case when (p_progress ->> 'invalidate_candidate')::boolean then 1 else 0 end,
    candidate_present = case when p_progress ? 'candidate' then true
                             when (p_progress ->> 'invalidate_candidate')::boolean then false else t.candidate_present end,
    candidate_value = case when p_progress ? 'candidate' then p_progress -> 'candidate' -> 'value'
                           when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_value end,
    candidate_step = case when p_progress ? 'candidate' then (p_progress -> 'candidate' ->> 'step')::integer
                          when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_step end,
    candidate_message_id = case when p_progress ? 'candidate'
                                then p_message_ids[(p_progress -> 'candidate' ->> 'message_index')::integer + 1]
                                when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_message_id end
  where t.chat_id = p_chat_id and t.finished_at is null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._apply_progress(uuid, jsonb, bigint[])', '{}');

-- p_deltas: the step's last part deltas (worker/loop/deltas.ts payloads, in sequence order), published on the chat's
-- parts channel in this transaction, before the step's own notification: the worker sends no separate statement for
-- them, and a runner whose fence is lost publishes nothing.
create or replace function chat_private.commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_messages jsonb, p_progress jsonb default '{}', p_deltas text[] default null)
returns chat_private.fence as $$
declare
  v_ids bigint[];
  v_chat chat_public.chats;
begin
  -- Every row _insert_worker_messages accepts is history, so a non-empty array moves the fence: the chat comes back
  -- as that one UPDATE left it, and it is final, since the rows inserted next find the fence current and write the
  -- chat no more (_fence_history). It serves the notification and the new fence; the lease is p_runner_id's (the
  -- lock checked it is live, and nothing here changes it): what current_fence would read, without reading it.
  v_chat := chat_private._begin_worker_transition(p_chat_id, 'commit_step', p_runner_id, p_history_version,
    p_generation_attempt, case when jsonb_typeof(p_messages) = 'array' then jsonb_array_length(p_messages) > 0 else false end);
  v_ids := chat_private._insert_worker_messages(p_chat_id, p_messages);
  perform chat_private._apply_progress(p_chat_id, p_progress, v_ids);
  perform pg_notify('chatd:chat:' || p_chat_id || ':parts', d) from unnest(p_deltas) with ordinality u(d, n) order by n;
  perform chat_private.notify_chat_row(v_chat, 'step');
  return (p_runner_id, v_chat.history_version, v_chat.generation_attempt)::chat_private.fence;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb, text[]) is
  E'Commits one step of the running turn (assistant output, tool results, control rows), its progress counters and its last part deltas; returns the new fence.';
select chat_private.grant_execute('chat_private.commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb, text[])', '{chat_worker}');

create or replace function chat_private.enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer default null) returns void as $$
declare
  v_chat chat_public.chats;
  v_deadline timestamptz;
begin
  v_chat := chat_private._begin_worker_transition(p_chat_id, 'enter_requires_action', p_runner_id, p_history_version,
                                                 p_generation_attempt);
  if p_pending_calls is null or jsonb_typeof(p_pending_calls) <> 'array' or jsonb_array_length(p_pending_calls) = 0
     or exists (select 1 from jsonb_array_elements(p_pending_calls) c
                where c ->> 'tool_name' = 'coder_structured_output'
                   or not exists (select 1 from jsonb_array_elements(v_chat.dynamic_tools) t
                                  where t ->> 'name' = c ->> 'tool_name')
                   or jsonb_typeof(c -> 'tool_call_id') is distinct from 'string') then
    raise exception 'pending calls must be calls of the chat''s declared dynamic tools' using errcode = 'TLRES';
  end if;
  v_deadline := now() + make_interval(secs => coalesce(p_timeout_seconds,
                                                       chat_private.setting_int('requires_action_timeout_seconds')));
  update chat_public.chats set status = chat_private._to_state('enter_requires_action', 'running'),
    pending_tool_calls = p_pending_calls,
    requires_action_deadline_at = v_deadline
  where id = p_chat_id;
  delete from chat_private.chat_leases where chat_id = p_chat_id;
  perform chat_private.add_job('chat_requires_action_deadline', json_build_object('chat_id', p_chat_id),
    p_run_at => v_deadline, p_job_key => 'chat-deadline:' || p_chat_id, p_max_attempts => 5);
  perform chat_private.notify_chat(p_chat_id, 'action_required');
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.enter_requires_action(uuid, uuid, bigint, bigint, jsonb, integer) is
  E'Pauses the turn for client-executed tools: the lease is released (no worker slot is held) and a deadline job is scheduled.';
select chat_private.grant_execute('chat_private.enter_requires_action(uuid, uuid, bigint, bigint, jsonb, integer)', '{chat_worker}');

-- p_outcome null: the active structured request (if any) succeeds with the durable candidate. Otherwise
-- {"status": "failed", "code": ..., "message": ...} ends it with that failure.
--
-- One chat row version: _lock_for_worker_transition locks the row and checks fence, lease and rule (it writes
-- nothing), then _finish_locked_turn ends the turn.
create or replace function chat_private.finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_outcome jsonb default null) returns chat_public.chat_status as $$
begin
  perform chat_private._lock_for_worker_transition(p_chat_id, 'finish_turn', p_runner_id, p_history_version,
                                                   p_generation_attempt);
  return chat_private._finish_locked_turn(p_chat_id, p_outcome);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.finish_turn(uuid, uuid, bigint, bigint, jsonb) is
  E'Ends the turn: the structured request''s receipt (success from the durable candidate, or the given failure), then the queue head is promoted. Returns the new status.';
select chat_private.grant_execute('chat_private.finish_turn(uuid, uuid, bigint, bigint, jsonb)', '{chat_worker}');

-- finish_turn's writes, for a chat its caller locked for finish_turn with the fence, lease and rule checked
-- (finish_turn, or commit_step_and_finish_turn after its commit_step). _end_turn's one UPDATE bumps
-- snapshot_version and sets the end state, then the receipt, then _promote_after_turn closes the turn and promotes
-- the queue head when the end state is running. Nothing before the turn closes reads the status; the same jobs are
-- enqueued (running stays running, waiting enqueues nothing, the promoted turn's insert enqueues).
create or replace function chat_private._finish_locked_turn(p_chat_id uuid, p_outcome jsonb)
returns chat_public.chat_status as $$
declare
  v_request uuid;
  v_request_chat uuid;
  v_candidate_present boolean;
  v_candidate_value jsonb;
  v_chat chat_public.chats;
begin
  v_chat := chat_private._end_turn(p_chat_id, 'finish_turn', null, true);
  -- _active_request, _open_turn and _write_receipt's locking read in one statement: the open turn's request, locked
  -- FOR UPDATE and still pending after any wait for that lock (the status is checked again on the newest row
  -- version), so it has no receipt yet and _record_receipt writes the only one.
  select r.id, r.chat_id, t.candidate_present, t.candidate_value
  into v_request, v_request_chat, v_candidate_present, v_candidate_value
  from chat_private.turn_progress t
  join chat_public.structured_output_requests r on r.id = t.structured_output_request_id
  where t.chat_id = p_chat_id and t.finished_at is null and r.status = 'pending'
  for update of r;
  if v_request is not null then
    if p_outcome is null then
      -- The value comes from the durable candidate record, never from the caller.
      if not v_candidate_present then
        raise exception 'the structured request has no current validated candidate' using errcode = 'SONCD';
      end if;
      perform chat_private._record_receipt(v_request, v_request_chat, 'succeeded', null, null, v_candidate_value);
    elsif p_outcome ->> 'status' = 'failed' then
      perform chat_private._record_receipt(v_request, v_request_chat, 'failed', p_outcome ->> 'code',
                                          p_outcome ->> 'message', null);
    else
      raise exception 'outcome must be null or a failure' using errcode = 'CIINV', column = 'outcome';
    end if;
  end if;
  v_chat := chat_private._promote_after_turn(v_chat);
  -- notify_chat: the chat is waiting or running, so only its own channel applies (the worker channel is for
  -- interrupting chats and history resets).
  perform chat_private.notify_chat_row(v_chat, 'turn_finished');
  return v_chat.status;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._finish_locked_turn(uuid, jsonb)', '{}');

create or replace function chat_private.finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_kind text, p_message text) returns void as $$
begin
  perform chat_private._begin_worker_transition(p_chat_id, 'finish_error', p_runner_id, p_history_version,
                                                p_generation_attempt);
  perform chat_private._fail_turn(p_chat_id, p_kind, p_message);
  perform chat_private.notify_chat(p_chat_id, 'error');
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.finish_error(uuid, uuid, bigint, bigint, text, text) is
  E'Infrastructure failure: the active request fails with generation_failed, the chat enters error; queued structured requests get failed receipts (generation_failed), other queued inputs wait.';
select chat_private.grant_execute('chat_private.finish_error(uuid, uuid, bigint, bigint, text, text)', '{chat_worker}');

create or replace function chat_private.finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_partial_messages jsonb default '[]') returns chat_public.chat_status as $$
declare
  v_request uuid;
  v_status chat_public.chat_status;
begin
  -- Partial output is history: a non-empty array moves the fence.
  perform chat_private._begin_worker_transition(p_chat_id, 'finish_interruption', p_runner_id, p_history_version,
    p_generation_attempt,
    case when jsonb_typeof(p_partial_messages) = 'array' then jsonb_array_length(p_partial_messages) > 0 else false end);
  perform chat_private._insert_worker_messages(p_chat_id, coalesce(p_partial_messages, '[]'));
  v_request := chat_private._active_request(p_chat_id);
  if v_request is not null then
    perform chat_private._write_receipt(v_request, 'canceled', 'interrupted');
  end if;
  -- The bump was _begin_worker_transition's (the receipt carries it), so _end_turn only sets the end state.
  v_status := (chat_private._promote_after_turn(
    chat_private._end_turn(p_chat_id, 'finish_interruption', 'interrupting', false))).status;
  perform chat_private.notify_chat(p_chat_id, 'interrupted');
  return v_status;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.finish_interruption(uuid, uuid, bigint, bigint, jsonb) is
  E'Ends an interrupted turn: partial output first, then the `interrupted` receipt, then the queue head is promoted.';
select chat_private.grant_execute('chat_private.finish_interruption(uuid, uuid, bigint, bigint, jsonb)', '{chat_worker}');

-- Run by the deadline job; no runner holds a waiting chat, so this is guarded by status and deadline instead.
create or replace function chat_private.cancel_requires_action(p_chat_id uuid) returns boolean as $$
declare
  v_chat chat_public.chats;
begin
  v_chat := chat_private._begin_transition(p_chat_id, 'cancel_requires_action');
  if v_chat.requires_action_deadline_at > now() then
    return false;
  end if;
  perform chat_private._cancel_pending_calls(p_chat_id, 'canceled: the client did not answer before the deadline',
    chat_private._to_state('cancel_requires_action', 'requires_action', 'running'));
  perform chat_private.notify_chat(p_chat_id, 'status');
  return true;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.cancel_requires_action(uuid)', '{chat_worker}');

-- Recovery: runnable chats whose lease expired (a crashed worker) are re-enqueued, counting recoveries per turn;
-- past the bound the turn fails instead of crashing workers forever. Runnable chats with no lease at all are
-- re-enqueued without counting when their job is gone, or held longer than a lease by a worker that never took
-- the lease (it died between picking the job and acquiring); a job that is waiting, or was just picked, is left
-- alone, so a backlog of new chats is not re-enqueued over and over. Returns the chats touched.
--
-- An outage is not a crash: within a lease length of a new server epoch (_server_epoch: a restart, a promotion) no
-- expired lease is taken (a lease that ran out while the server was down or being failed over belongs to a runner
-- that could not renew it, and which renews it or takes the chat again as soon as it reconnects:
-- worker/chat-run.ts), so a restart or a failover counts no recovery. The grace does not hold a worker known dead:
-- one whose alive report lapsed while another worker still reported before the epoch changed; its leases are
-- taken as soon as they expire, a lease after its death. Any other runner that died meanwhile is recovered a lease
-- length after the epoch was first seen, and counted then.
create or replace function chat_private._server_epoch() returns chat_private.server_epoch as $$
declare
  v_epoch text := (select system_identifier::text from pg_control_system()) || '/'
    || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' || pg_postmaster_start_time()::text;
  v_row chat_private.server_epoch;
begin
  select * into v_row from chat_private.server_epoch;
  if v_row.epoch = v_epoch then
    return v_row;
  end if;
  -- Concurrent callers: the row lock orders them, and the second finds the epoch recorded (the where clause is
  -- evaluated again after the first commits), so last_seen_before is taken once, before any report of the epoch.
  insert into chat_private.server_epoch as e (epoch, observed_at, last_seen_before)
  values (v_epoch, case when v_row.epoch is null then pg_postmaster_start_time() else now() end,
          (select max(seen_at) from chat_private.worker_processes))
  on conflict (one) do update set epoch = excluded.epoch, observed_at = excluded.observed_at,
    last_seen_before = excluded.last_seen_before
  where e.epoch is distinct from excluded.epoch;
  select * into v_row from chat_private.server_epoch;
  return v_row;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private._server_epoch() is
  E'The server epoch (system identifier/timeline/postmaster start); records a new one with when it was first seen.';

create or replace function chat_private.sweep_expired_leases() returns integer as $$
declare
  v_chat record;
  v_count integer := 0;
  v_recoveries integer;
  v_lease interval := make_interval(secs => chat_private.setting_int('lease_seconds'));
  v_epoch chat_private.server_epoch := chat_private._server_epoch();
  v_dead_workers text[];
  v_dead_runs bigint[];
begin
  for v_chat in
    select c.id, l.chat_id is not null as had_lease from chat_public.chats c
    left join chat_private.chat_leases l on l.chat_id = c.id
    where c.status in ('running', 'interrupting')
      and ((not chat_private.lease_row_is_live(l.expires_at)
            and (v_epoch.observed_at <= now() - v_lease
                 or exists (select 1 from chat_private.worker_processes w
                            where w.worker_id = l.worker_id and w.expires_at < v_epoch.last_seen_before)))
           or (l.chat_id is null and not exists (
                 select 1 from graphile_worker.jobs j
                 where j.key = 'chat:' || c.id
                   and (j.locked_at is null
                        or (j.locked_at > now() - v_lease
                            and not exists (select 1 from chat_private.worker_processes w
                                            where w.queue_id = j.locked_by and not chat_private.worker_row_is_live(w.expires_at)))))))
    for update of c skip locked
  loop
    v_count := v_count + 1;
    if v_chat.had_lease then
      update chat_private.turn_progress set recoveries = recoveries + 1
      where chat_id = v_chat.id and finished_at is null returning recoveries into v_recoveries;
      delete from chat_private.chat_leases l
      where l.chat_id = v_chat.id and not chat_private.lease_row_is_live(l.expires_at);
      if v_recoveries > chat_private.setting_int('max_recoveries_per_turn') then
        perform chat_private._begin_transition(v_chat.id, 'finish_error');
        perform chat_private._fail_turn(v_chat.id, 'recovery_limit',
          'the turn crashed its worker too many times and was stopped');
        perform chat_private.notify_chat(v_chat.id, 'error');
        continue;
      end if;
    end if;
    perform chat_private.enqueue_chat_run(v_chat.id);
  end loop;
  -- Jobs that dead workers hold (fetched, never finished) are unlocked through Graphile Worker's public API
  -- (force_unlock_workers: the other tasks' jobs run again now rather than after its four-hour lock timeout), and
  -- their chat_run jobs, which only wake chats the loop above has woken again, removed (complete_jobs, which takes
  -- unlocked jobs only: hence the ids first), so the queue shows each job once in its real state
  -- (chat_private.job_queue). Both in this transaction: no other worker fetches a job in between.
  select array_agg(w.queue_id) into v_dead_workers from chat_private.worker_processes w
  where not chat_private.worker_row_is_live(w.expires_at)
    and exists (select 1 from graphile_worker.jobs j where j.locked_by = w.queue_id);
  if v_dead_workers is not null then
    select array_agg(j.id) into v_dead_runs from graphile_worker.jobs j
    where j.task_identifier = 'chat_run' and j.locked_by = any(v_dead_workers);
    perform graphile_worker.force_unlock_workers(v_dead_workers);
    perform graphile_worker.complete_jobs(coalesce(v_dead_runs, '{}'));
  end if;
  delete from chat_private.worker_processes w
  where w.expires_at < now() - interval '1 hour'
    and not exists (select 1 from graphile_worker.jobs j where j.locked_by = w.queue_id);
  return v_count;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.sweep_expired_leases() is
  E'Re-enqueues runnable chats without a live lease (at once when the worker that fetched their job is dead); counts recoveries per turn and fails turns past the bound.';
select chat_private.grant_execute('chat_private.sweep_expired_leases()', '{chat_worker}');

-- A worker process reports that it is alive with each sweep (worker/index.ts), until p_ttl_seconds from now; the
-- jobs it fetched (Graphile Worker's locked_by = p_queue_id) are its own until then.
create or replace function chat_private.report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric)
returns void as $$
  -- The first report of a new server epoch records it before its own report (_server_epoch: last_seen_before).
  select chat_private._server_epoch();
  insert into chat_private.worker_processes (queue_id, worker_id, expires_at)
  values (p_queue_id, p_worker_id, now() + make_interval(secs => p_ttl_seconds))
  on conflict (queue_id) do update set seen_at = now(), expires_at = excluded.expires_at;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.report_worker_alive(text, text, numeric) is
  E'A worker process is alive until p_ttl_seconds from now; the jobs it locked count as running until then.';
select chat_private.grant_execute('chat_private.report_worker_alive(text, text, numeric)', '{chat_worker}');

-- A worker that stops gracefully has finished or returned its jobs: its row goes.
create or replace function chat_private.report_worker_stopped(p_queue_id text) returns void as $$
  delete from chat_private.worker_processes where queue_id = p_queue_id;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.report_worker_stopped(text)', '{chat_worker}');

