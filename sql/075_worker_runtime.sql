-- Worker runtime support (the agent loop in worker/): retry settings and the visible retry state.
-- Re-runnable like every file here; 040 truncates transition_rules, so the rows for record_retry_state are
-- inserted again on each application.

insert into chat_private.settings (name, value, description) values
  ('retry_max_attempts', '5', 'Provider attempts per step (the first try included) before a retryable error ends the turn.'),
  ('retry_initial_delay_ms', '1000', 'Backoff before the second provider attempt; doubles per attempt.'),
  ('retry_max_delay_ms', '30000', 'Upper bound of the provider retry backoff.')
on conflict (name) do update set description = excluded.description;

insert into chat_private.transition_rules (transition, from_state, allowed, outcome) values
  ('record_retry_state', 'waiting', false, 'refused (CHTRN)'),
  ('record_retry_state', 'running', true, 'running: retry_state set or cleared, generation_attempt + 1 when set'),
  ('record_retry_state', 'interrupting', false, 'refused (CHTRN): the runner must finish the interruption'),
  ('record_retry_state', 'requires_action', false, 'refused (CHTRN)'),
  ('record_retry_state', 'error', false, 'refused (CHTRN)'),
  ('record_retry_state', 'archived', false, 'refused (CHARC)')
on conflict (transition, from_state) do update set allowed = excluded.allowed, outcome = excluded.outcome;

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
  perform chat_private.begin_worker_transition(p_chat_id, 'record_retry_state', p_runner_id, p_history_version,
                                               p_generation_attempt);
  update chat_public.chats set retry_state = p_state,
    generation_attempt = generation_attempt + case when p_state is null then 0 else 1 end
  where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, case when p_state is null then 'retry_cleared' else 'retry' end);
  return chat_private.current_fence(p_chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.record_retry_state(uuid, uuid, bigint, bigint, jsonb) is
  E'Worker: publishes (or clears) the provider retry state of the running step in chats.retry_state; a new state starts a new generation attempt. Returns the new fence.';

revoke all on function chat_private.record_retry_state(uuid, uuid, bigint, bigint, jsonb) from public;
grant execute on function chat_private.record_retry_state(uuid, uuid, bigint, bigint, jsonb) to chat_worker;
