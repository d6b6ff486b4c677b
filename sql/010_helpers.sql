-- Identity, settings, experiments and notification helpers shared by every transition.

-- One expression without FROM, so that PostgreSQL inlines it into the calling query (RLS policies, require_user)
-- instead of running a SQL function per call. An empty or missing claim matches no uuid and gives null.
create or replace function chat_public.current_user_id() returns uuid as $$
  select case when pg_catalog.current_setting('jwt.claims.sub', true)
                   operator(pg_catalog.~) '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
              then pg_catalog.current_setting('jwt.claims.sub', true)::pg_catalog.uuid end;
$$ language sql stable;
comment on function chat_public.current_user_id() is
  E'The id of the user making the request (the `sub` claim of the JWT), or null for anonymous requests.';
select chat_private.grant_execute('chat_public.current_user_id()', '{chat_anonymous, chat_user, chat_operator, chat_worker}');

create or replace function chat_private.require_user() returns uuid as $$
declare
  v_user uuid := chat_public.current_user_id();
begin
  if v_user is null or not exists (select 1 from chat_public.users where id = v_user) then
    raise exception 'authentication required' using errcode = 'NOAUT';
  end if;
  return v_user;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.require_user()', '{}');

-- The helpers below are PL/pgSQL, not SQL: PostgreSQL does not inline a SQL function that is security definer or
-- has a SET clause, and parses and plans its body afresh for each calling query (once per transaction when the
-- caller is PL/pgSQL), while PL/pgSQL keeps its plans for the session (the worker's connections are pooled).
create or replace function chat_private.setting(p_name text) returns jsonb as $$
begin
  return (select value from chat_private.settings where name = p_name);
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.setting(text)', '{chat_operator}');

create or replace function chat_private.setting_int(p_name text) returns integer as $$
begin
  return (select (value #>> '{}')::integer from chat_private.settings where name = p_name);
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
-- chat_private.turns_at_recovery_bound (sql/090) reads a bound with the operator's rights.
select chat_private.grant_execute('chat_private.setting_int(text)', '{chat_operator}');

create or replace function chat_private.experiment_enabled(p_name text) returns boolean as $$
begin
  return coalesce((select enabled from chat_private.experiments where name = p_name), false);
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.experiment_enabled(text)', '{}');

-- One NOTIFY per transition: streams re-read rows newer than their watermark, so the payload is only a hint.
-- notify_chat_row takes the chat row a transition already holds (from its locking UPDATE ... RETURNING or its last
-- read). It is neither security definer nor has a SET clause, so PostgreSQL inlines it into the calling statement;
-- it names only pg_catalog objects, qualified, so the caller's search_path cannot redirect it.
create or replace function chat_private.chat_notification(p_chat chat_public.chats, p_change text) returns text as $$
  select pg_catalog.json_build_object(
    'chat_id', (p_chat).id, 'change', p_change, 'status', (p_chat).status, 'archived', (p_chat).archived,
    'snapshot_version', (p_chat).snapshot_version, 'history_version', (p_chat).history_version,
    'queue_version', (p_chat).queue_version, 'generation_attempt', (p_chat).generation_attempt)::text;
$$ language sql stable;
select chat_private.grant_execute('chat_private.chat_notification(chat_public.chats, text)', '{}');

create or replace function chat_private.notify_chat_row(p_chat chat_public.chats, p_change text) returns void as $$
  select pg_catalog.pg_notify('chatd:chat:' || (p_chat).id, chat_private.chat_notification(p_chat, p_change));
$$ language sql volatile;
select chat_private.grant_execute('chat_private.notify_chat_row(chat_public.chats, text)', '{}');

-- What a running step must hear at once (an interrupt, or an edit that moves the history under it) also goes to
-- `chatd:worker`, the one channel every worker process listens to (worker/loop/listener.ts), so a run needs no
-- LISTEN of its own. Those changes come from client and operator transitions, which notify through here; the
-- worker's own transitions (notify_chat_row) never interrupt a run. A missed interrupt is still seen by the lease
-- heartbeat, which reads the chat's status (sql/070 renew_leases); a missed edit fences the run's next commit.
create or replace function chat_private.notify_chat(p_chat_id uuid, p_change text) returns void as $$
declare
  v_chat chat_public.chats;
begin
  select * into v_chat from chat_public.chats c where c.id = p_chat_id;
  if not found then
    return;
  end if;
  perform chat_private.notify_chat_row(v_chat, p_change);
  if v_chat.status = 'interrupting' or p_change = 'history_reset' then
    perform pg_notify('chatd:worker', chat_private.chat_notification(v_chat, p_change));
  end if;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.notify_chat(uuid, text)', '{}');

-- The one way chatd's SQL adds a Graphile Worker job, so that every session plans Graphile Worker's add_jobs the
-- same way (a session keeps the first plan it makes of each statement, whoever called it). Generic plans: add_jobs's
-- statements are planned for an unnest of about ten specs, so with our one PostgreSQL re-planned them at every call;
-- a generic plan makes an enqueue about 3.5 times cheaper (psql, a migrated scratch database, one transaction of
-- `select chat_private.add_job('chat_run', '{}', p_job_key => 'g:' || g, p_max_attempts => 1) from
-- generate_series(1, 2000) g`: 150 ms, against 530 ms through a wrapper without these settings). That estimate also
-- made the generic plan join the specs to the jobs table by a sequential scan: while the queue held fewer than
-- about a thousand jobs (above that the index wins even for ten), every enqueue read all of them. Without
-- sequential scans the generic plan probes the job key's index (test/db/enqueue-plans.test.ts).
create or replace function chat_private.add_job(p_task text, p_payload json, p_job_key text default null,
  p_run_at timestamptz default null, p_max_attempts integer default 25) returns void as $$
begin
  perform graphile_worker.add_job(p_task, p_payload, run_at => p_run_at, job_key => p_job_key,
    max_attempts => p_max_attempts);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan set enable_seqscan to off;
select chat_private.grant_execute('chat_private.add_job(text, json, text, timestamptz, integer)', '{}');
