-- The operator's toolkit: views that explain the system's state, and repair transitions that chat_operator may run
-- (and nothing broader). Views run with the caller's rights (security_invoker), so RLS still applies.

create or replace view chat_private.stuck_chats with (security_invoker = true) as
  select c.id as chat_id, c.owner_id, c.status, c.updated_at,
         l.runner_id, l.worker_id, l.expires_at as lease_expired_at,
         now() - coalesce(l.expires_at, c.updated_at) as stuck_for,
         t.recoveries
  from chat_public.chats c
  left join chat_private.chat_leases l on l.chat_id = c.id
  left join chat_private.turn_progress t on t.chat_id = c.id and t.finished_at is null
  where c.status in ('running', 'interrupting') and (l.chat_id is null or not chat_private.lease_row_is_live(l.expires_at));
comment on view chat_private.stuck_chats is
  E'Runnable chats (running, interrupting) without a live lease. The worker''s sweep re-enqueues them every few seconds; a row that stays here means no worker is running. Columns: lease_expired_at is null when no lease was ever taken for the current run; stuck_for counts from the lease expiry or the last change; recoveries is the open turn''s count of expired leases.';
-- The worker's /metrics counts stuck chats (src/metrics.ts).
grant select on chat_private.stuck_chats to chat_operator, chat_worker;

create or replace view chat_private.lease_holders with (security_invoker = true) as
  select l.chat_id, l.runner_id, l.worker_id, l.acquired_at, l.expires_at, chat_private.lease_row_is_live(l.expires_at) as live,
         c.status, c.generation_attempt
  from chat_private.chat_leases l join chat_public.chats c on c.id = l.chat_id;
comment on view chat_private.lease_holders is
  E'Every runner lease: which worker process (worker_id: host:pid:suffix) holds which chat, until when, and whether it is still live.';
grant select on chat_private.lease_holders to chat_operator;

create or replace view chat_private.request_outcomes_hourly with (security_invoker = true) as
  select date_trunc('hour', coalesce(finished_at, created_at)) as hour, status, error_code, count(*) as requests,
         model_config_id, provider, model, sum(finalization_attempts) as finalization_attempts,
         sum(model_steps) as model_steps, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
         avg(finished_at - started_at) as avg_duration
  from chat_public.structured_output_requests
  group by 1, 2, 3, 5, 6, 7;
comment on view chat_private.request_outcomes_hourly is
  E'Structured output requests per hour (of their receipt, or of their creation while pending), by status, error code and the model that produced the receipt (model_config_id, provider, model: null while pending and for receipts written before provenance was recorded), with their attempts, steps and tokens summed and the mean time from the turn''s start to the receipt. Sum over the model columns for outcomes alone.';
grant select on chat_private.request_outcomes_hourly to chat_operator;

create or replace view chat_private.recent_failures with (security_invoker = true) as
  select r.finished_at as at, 'request' as kind, r.chat_id, r.id as request_id, r.error_code as code, r.error_message as message
  from chat_public.structured_output_requests r where r.status = 'failed'
  union all
  select c.updated_at, 'chat', c.id, null, c.last_error ->> 'kind', c.last_error ->> 'message'
  from chat_public.chats c where c.status = 'error';
comment on view chat_private.recent_failures is
  E'Failed structured requests and chats in error, with their sanitized reasons (never provider bodies or schema values). Order by `at` desc.';
grant select on chat_private.recent_failures to chat_operator;

create or replace view chat_private.queue_depth with (security_invoker = true) as
  select q.chat_id, c.status, count(*) as queued, count(q.structured_output_request_id) as queued_structured,
         min(q.created_at) as oldest
  from chat_public.chat_queued_messages q join chat_public.chats c on c.id = q.chat_id
  group by q.chat_id, c.status;
comment on view chat_private.queue_depth is
  E'Queued inputs per chat: how many, how many carry a structured request, and the age of the oldest. A chat in error keeps its plain queued inputs until the client (or chat_private.operator_retry_chat) resumes it; its queued structured requests got failed receipts when it entered error.';
grant select on chat_private.queue_depth to chat_operator;

create or replace view chat_private.turns_at_recovery_bound with (security_invoker = true) as
  select t.chat_id, t.id as turn_id, t.structured_output_request_id, t.recoveries, t.steps, t.started_at, t.finished_at
  from chat_private.turn_progress t
  where t.recoveries >= chat_private.setting_int('max_recoveries_per_turn');
comment on view chat_private.turns_at_recovery_bound is
  E'Turns whose worker crashed (lease expired) as often as max_recoveries_per_turn allows, or more: the next crash, or the one that already happened, failed them with generation_failed.';
grant select on chat_private.turns_at_recovery_bound to chat_operator;

-- Graphile Worker's queue has no RLS and lives in a schema of its own that chat_operator cannot read (its migrations
-- own it and may recreate its objects, dropping any grant we add there). This view therefore runs with its owner's
-- rights, not the caller's, and shows counts only: no payloads, keys or error texts.
create or replace view chat_private.job_queue as
  select j.task_identifier,
         count(*) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at <= now()) as waiting,
         count(*) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at > now()) as scheduled,
         count(*) filter (where j.locked_at is not null and not dead.is_dead) as running,
         count(*) filter (where j.locked_at is not null and dead.is_dead) as locked_by_dead_worker,
         count(*) filter (where j.locked_at is null and j.attempts >= j.max_attempts) as failed_permanently,
         min(j.run_at) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at <= now())
           as oldest_waiting_since
  from graphile_worker.jobs j
  cross join lateral (select exists (select 1 from chat_private.worker_processes w
                                     where w.queue_id = j.locked_by
                                       and not chat_private.worker_row_is_live(w.expires_at)) as is_dead) dead
  group by j.task_identifier;
comment on view chat_private.job_queue is
  E'Graphile Worker jobs by task, each counted once: waiting (due now), scheduled (later, e.g. requires_action deadlines), running (locked by a live worker), locked_by_dead_worker (its worker stopped reporting: the sweep re-enqueues the chat and removes the job), failed_permanently (out of attempts, not locked) and since when the oldest due job waits. Counts only; it reads the queue with its owner''s rights because chat_operator has none on graphile_worker.';
grant select on chat_private.job_queue to chat_operator;

-- Repair: a lease held by a worker that is gone (or hung) is released and the chat re-enqueued at once, instead of
-- waiting for the lease to expire. The old runner, if alive, is fenced out (its lease row is gone).
create or replace function chat_private.operator_release_lease(p_chat_id uuid) returns boolean as $$
declare
  v_released boolean;
begin
  perform chat_private._begin_transition(p_chat_id, 'operator_release_lease');
  delete from chat_private.chat_leases where chat_id = p_chat_id returning true into v_released;
  perform chat_private.enqueue_chat_run(p_chat_id);
  perform chat_private.notify_chat(p_chat_id, 'lease_released');
  return coalesce(v_released, false);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_release_lease(uuid) is
  E'Operator repair: releases the chat''s runner lease and re-enqueues the chat. Returns whether a lease existed.';
select chat_private.grant_execute('chat_private.operator_release_lease(uuid)', '{chat_operator}');

-- Repair: ends a pending structured request with exactly one operator_canceled receipt carrying the reason.
-- A queued request leaves the queue; an active one ends its turn (interrupting a running step).
create or replace function chat_private.operator_cancel_request(p_request_id uuid, p_reason text) returns bigint as $$
declare
  v_request chat_public.structured_output_requests;
  v_chat chat_public.chats;
  v_receipt bigint;
  v_active boolean;
begin
  if p_reason is null or length(btrim(p_reason)) = 0 or length(p_reason) > 500 then
    raise exception 'a reason of 1 to 500 characters is required' using errcode = 'CIINV', column = 'reason';
  end if;
  select * into v_request from chat_public.structured_output_requests where id = p_request_id;
  if not found then
    raise exception 'structured output request not found' using errcode = 'SONTF';
  end if;
  v_chat := chat_private._begin_transition(v_request.chat_id, 'operator_cancel_request');
  v_active := chat_private._active_request(v_chat.id) is not distinct from p_request_id;
  delete from chat_public.chat_queued_messages where structured_output_request_id = p_request_id;
  v_receipt := chat_private._write_receipt(p_request_id, 'canceled', 'operator_canceled', p_reason);
  if v_receipt is null then
    raise exception 'the request has already finished' using errcode = 'SODON';
  end if;
  if v_active and v_chat.status = 'running' then
    update chat_public.chats set status = chat_private._to_state('operator_cancel_request', 'running', 'interrupting')
    where id = v_chat.id;
  elsif v_active and v_chat.status = 'requires_action' then
    perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: an operator canceled the request',
      chat_private._to_state('operator_cancel_request', 'requires_action', 'running'));
    perform chat_private._promote_after_turn(
      chat_private._end_turn(v_chat.id, 'operator_cancel_request', 'requires_action', false));
  end if;
  perform chat_private.notify_chat(v_chat.id, 'operator_canceled');
  return v_receipt;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_cancel_request(uuid, text) is
  E'Operator repair: cancels a pending structured request with an operator_canceled receipt whose message is the reason. Returns the receipt message id; SODON if it already finished.';
-- The worker's batch cancellation ends the canceled batch's pending requests with it (worker/batch-tasks.ts).
select chat_private.grant_execute('chat_private.operator_cancel_request(uuid, text)', '{chat_operator, chat_worker}');

-- Repair: resumes a chat in error. The queue head runs next; without a queue, the last user input runs again as
-- a new turn (its structured request, already failed, is not revived). The queue holds no structured request by
-- then: each got its failed receipt when the chat entered error (_fail_turn).
create or replace function chat_private.operator_retry_chat(p_chat_id uuid) returns chat_public.chat_status as $$
declare
  v_last bigint;
begin
  perform chat_private._begin_transition(p_chat_id, 'operator_retry_chat');
  if chat_private._promote_queue_head(p_chat_id) is null then
    select id into v_last from chat_public.chat_messages
    where chat_id = p_chat_id and role = 'user' and kind = 'message' and not deleted order by id desc limit 1;
    if v_last is null then
      raise exception 'the chat has no user input to retry' using errcode = 'CHTRN';
    end if;
    perform chat_private._start_turn(p_chat_id, v_last, null);
  end if;
  update chat_public.chats set status = chat_private._to_state('operator_retry_chat', 'error'), last_error = null,
    retry_state = null
  where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, 'status');
  return 'running';
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_retry_chat(uuid) is
  E'Operator repair: resumes a chat in error: the queue head runs next, else the last user input runs again as a new turn. Queued structured requests already have failed receipts (generation_failed) from when the chat entered error.';
select chat_private.grant_execute('chat_private.operator_retry_chat(uuid)', '{chat_operator}');
