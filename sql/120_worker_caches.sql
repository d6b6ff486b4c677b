-- Worker caches and fused statements (worker/loop/config.ts, run.ts). The triggers that bump the
-- version are in migrations/0008.
--
-- worker_config_version: one row whose version every change of the rows the worker caches per process (settings,
-- model configs and their secrets, stop hooks and their secrets) bumps, in the changing transaction. The worker
-- reads the version in statements it makes anyway (acquire, turn state) and every cached row set carries the
-- version read in the same snapshot as its rows, so a cache entry older than a version the run has seen is never
-- used: a change committed before a run's statement started is always seen, as when every run read the rows.
comment on table chat_private.worker_config_version is
  E'Bumped by every change of settings, model configs, stop hooks and their secrets: the worker''s per-process caches of those rows are valid while their version is current.';

create or replace function chat_private.tg_worker_config__bump() returns trigger as $$
begin
  update chat_private.worker_config_version set version = version + 1 where id;
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_worker_config__bump()', '{}');

-- The final commit of a turn without stop hooks: commit_step, then finish_turn's writes under the lock commit_step
-- took, in one transaction (what finish_turn would check again holds by construction: see below).
-- When an enabled stop hook exists, only the step is committed and status is null: the worker calls the hooks and
-- finishes the turn itself, as after a plain commit_step.
create or replace function chat_private.commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid,
  p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb default null,
  p_deltas text[] default null, out runner_id uuid, out history_version bigint, out generation_attempt bigint, out status chat_public.chat_status) as $$
declare
  v_fence chat_private.fence;
begin
  v_fence := chat_private.commit_step(p_chat_id, p_runner_id, p_history_version, p_generation_attempt, p_messages, p_progress,
                                      p_deltas);
  runner_id := v_fence.runner_id;
  history_version := v_fence.history_version;
  generation_attempt := v_fence.generation_attempt;
  -- finish_turn without its lock and checks: commit_step holds the chat lock and checked the fence (which it moved
  -- to v_fence itself), the lease (which nothing here changes) and its rule. commit_step and finish_turn are allowed
  -- from the same states and commit_step leaves the status alone, so finish_turn's rule holds too
  -- (test/db/worker-transitions.test.ts asserts both, and that the fused commit locks once).
  if not exists (select 1 from chat_private.stop_hooks h where h.enabled) then
    status := chat_private._finish_locked_turn(p_chat_id, p_outcome);
  end if;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.commit_step_and_finish_turn(uuid, uuid, bigint, bigint, jsonb, jsonb, jsonb, text[]) is
  E'commit_step then, when no stop hook is enabled, finish_turn with the new fence, in one transaction. Returns the new fence and the new status (null: the step is committed, the turn is not finished).';
select chat_private.grant_execute('chat_private.commit_step_and_finish_turn(uuid, uuid, bigint, bigint, jsonb, jsonb, jsonb, text[])', '{chat_worker}');
