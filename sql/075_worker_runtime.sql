-- Worker runtime support (the agent loop in worker/): retry settings and the visible retry state.
-- The retry settings and record_retry_state's transition rules are rows: migrations/0008.

-- p_state: {attempt, max_attempts, delay_ms, retrying_at, error: {kind, status?, message}} while the worker backs
-- off, or null once an attempt succeeded. Setting a state starts a new generation attempt, so the next provider
-- attempt streams into a fresh preview episode (clients drop the failed attempt's partial preview); the new fence
-- is returned. Clearing keeps the attempt.
create or replace function chat_private.record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_state jsonb) returns chat_private.fence as $$
begin
  if p_state is not null and (jsonb_typeof(p_state) <> 'object' or jsonb_typeof(p_state -> 'attempt') <> 'number') then
    raise exception 'retry state must be an object with an attempt number' using errcode = 'CIINV', column = 'state';
  end if;
  perform chat_private._begin_worker_transition(p_chat_id, 'record_retry_state', p_runner_id, p_history_version,
                                               p_generation_attempt);
  update chat_public.chats set retry_state = p_state,
    generation_attempt = generation_attempt + case when p_state is null then 0 else 1 end
  where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, case when p_state is null then 'retry_cleared' else 'retry' end);
  return chat_private.current_fence(p_chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.record_retry_state(uuid, uuid, bigint, bigint, jsonb) is
  E'Worker: publishes (or clears) the provider retry state of the running step in chats.retry_state; a new state starts a new generation attempt. Returns the new fence.';
select chat_private.grant_execute('chat_private.record_retry_state(uuid, uuid, bigint, bigint, jsonb)', '{chat_worker}');
