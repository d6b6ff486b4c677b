-- Data lifecycle: deleting a chat (its owner, or an operator), deleting a user (an operator), and retention (the
-- worker's data_retention task). Every deletion goes through chat_private._delete_chats, the one owner of "what a
-- deleted chat leaves behind: nothing", so that a client's delete, an operator's and the retention job's agree.

-- Deletes the chats p_chat_ids and their subagent children, whole, in the caller's transaction: messages and their
-- internals, queue, structured requests, turns (through the foreign keys' cascades), leases and Graphile Worker's
-- jobs for them (through its public remove_job/complete_jobs), and the idempotency keys whose remembered result
-- names one of them (a retried create would otherwise answer with a chat that is gone). A batch item running on one
-- of them is finished as canceled (chat_deleted) and its slot refilled, as a receipt would have done.
-- A run holding one of them is told at once (chatd:worker, as an interrupt) and finds its lease gone; its next
-- commit is fenced out (_begin_worker_transition reads a missing chat as a lost fence) and it stops writing.
-- The structured requests' ids are kept in chat_private.deleted_requests (SODEL for a poller).
-- Rows are locked parents first, then children, the order in which a spawn locks them. Returns what was removed.
create or replace function chat_private._delete_chats(p_chat_ids uuid[]) returns jsonb as $$
declare
  v_roots uuid[];
  v_ids uuid[];
  v_chat chat_public.chats;
  v_counts jsonb;
  v_jobs integer := 0;
  v_item record;
  v_batch chat_public.batches;
  v_rows bigint;
begin
  select coalesce(array_agg(c.id order by c.id), '{}') into v_roots
  from (select c.id from chat_public.chats c where c.id = any(p_chat_ids) order by c.id for update) c;
  select v_roots || coalesce(array_agg(c.id order by c.id), '{}') into v_ids
  from (select c.id from chat_public.chats c where c.parent_chat_id = any(v_roots) and not c.id = any(v_roots)
        order by c.id for update) c;
  if cardinality(v_ids) = 0 then
    return jsonb_build_object('chats', 0);
  end if;
  select jsonb_build_object(
    'chats', cardinality(v_ids),
    'messages', (select count(*) from chat_public.chat_messages where chat_id = any(v_ids)),
    'queued_messages', (select count(*) from chat_public.chat_queued_messages where chat_id = any(v_ids)),
    'structured_requests', (select count(*) from chat_public.structured_output_requests where chat_id = any(v_ids)),
    'pending_structured_requests', (select count(*) from chat_public.structured_output_requests
                                    where chat_id = any(v_ids) and status = 'pending'),
    'turns', (select count(*) from chat_private.turn_progress where chat_id = any(v_ids)),
    'leases', (select count(*) from chat_private.chat_leases where chat_id = any(v_ids)))
  into v_counts;

  -- Tell running steps first (a hint: the lease and the fence decide).
  for v_chat in select * from chat_public.chats where id = any(v_ids) and status in ('running', 'interrupting') loop
    v_chat.status := 'interrupting';
    perform pg_notify('chatd:worker', chat_private.chat_notification(v_chat, 'deleted'));
  end loop;
  perform pg_notify('chatd:chat:' || id, json_build_object('chat_id', id, 'change', 'deleted')::text)
  from unnest(v_ids) id;

  delete from chat_private.chat_leases where chat_id = any(v_ids);
  select v_jobs + count(*) into v_jobs from unnest(v_ids) id,
    lateral (select graphile_worker.remove_job(k) from unnest(array['chat:' || id, 'chat-deadline:' || id]) k) r
  where (r.remove_job).id is not null;
  -- A job that lost its key (a worker held it when a removal came: Graphile Worker then clears the key and leaves
  -- the job to its task) and then failed still names the chat in its payload, which only Graphile Worker's table
  -- holds (its public view has no payload): read there, removed through complete_jobs. A locked one goes when its
  -- task ends.
  select v_jobs + count(*) into v_jobs from graphile_worker.complete_jobs(array(
    select j.id from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier in ('chat_run', 'chat_requires_action_deadline') and j.key is null and j.locked_at is null
      and j.payload ->> 'chat_id' = any(v_ids::text[])));

  for v_item in
    update chat_public.batch_items set status = 'canceled', error_code = 'chat_deleted',
      error_message = 'the item''s chat was deleted', finished_at = now()
    where chat_id = any(v_ids) and status = 'running'
    returning batch_id, slot
  loop
    select * into v_batch from chat_public.batches where id = v_item.batch_id for update;
    if v_item.slot is null or v_batch.status <> 'running' or v_item.slot > v_batch.concurrency
       or not chat_private.fill_batch_slot(v_batch, v_item.slot) then
      perform chat_private.complete_batch_if_done(v_item.batch_id);
    end if;
    perform chat_private.notify_batch(v_item.batch_id, 'progress');
  end loop;

  -- Their webhook deliveries go too (a pending one is never sent: it would send the receiver to a Response that
  -- reads as deleted). A delivery job left behind finds no delivery and ends.
  delete from chat_private.webhook_deliveries d
  where d.subject_id = any(array(select 'resp_' || replace(r.id::text, '-', '')
                                 from chat_public.structured_output_requests r where r.chat_id = any(v_ids)));
  get diagnostics v_rows = row_count;
  v_counts := v_counts || jsonb_build_object('webhook_deliveries', v_rows);
  insert into chat_private.deleted_requests (id, owner_id)
  select r.id, c.owner_id from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.chat_id = any(v_ids)
  on conflict (id) do nothing;
  delete from chat_private.idempotency_keys k
  using (select distinct owner_id from chat_public.chats where id = any(v_roots)) o
  where k.owner_id = o.owner_id and k.result ->> 'chat_id' = any(v_ids::text[]);

  -- Messages and requests reference each other (inputs and receipts name their request, a request its receipt):
  -- one statement deletes both, so each key is checked once both sides are gone. The chats' cascades take the rest.
  with requests as (
    delete from chat_public.structured_output_requests where chat_id = any(v_ids) returning 1),
  turns as (
    delete from chat_private.turn_progress where chat_id = any(v_ids) returning 1),
  messages as (
    delete from chat_public.chat_messages where chat_id = any(v_ids) returning 1),
  queued as (
    delete from chat_public.chat_queued_messages where chat_id = any(v_ids) returning 1)
  select (select count(*) from requests) + (select count(*) from turns) + (select count(*) from messages)
    + (select count(*) from queued) into v_rows;
  delete from chat_public.chats where id = any(v_ids) and parent_chat_id is not null;
  delete from chat_public.chats where id = any(v_ids);
  return v_counts || jsonb_build_object('jobs', v_jobs);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private._delete_chats(uuid[]) is
  E'Deletes chats and their subagent children with everything that names them, in the caller''s transaction; returns counts of what went.';
select chat_private.grant_execute('chat_private._delete_chats(uuid[])', '{}');

-- The client's delete: only the owner's chat (anyone else's reads as not found, CHNTF, as for every transition).
-- Allowed in every state, archived included; a running turn is stopped (see _delete_chats). Not a transition of the
-- rule table: it leads to no state.
create or replace function chat_public.delete_chat(chat_id uuid) returns uuid as $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform 1 from chat_public.chats c where c.id = delete_chat.chat_id and c.owner_id = v_user for update;
  if not found then
    raise exception 'chat not found' using errcode = 'CHNTF', column = 'chat_id';
  end if;
  perform chat_private._delete_chats(array[delete_chat.chat_id]);
  return delete_chat.chat_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.delete_chat(uuid) is
  E'Deletes the chat for good: its messages, receipts, queue, structured requests and subagent chats. A running turn is stopped first. Polling a deleted chat''s structured request (findStructuredOutputRequest) answers REQUEST_DELETED. Returns the deleted chat''s id.';
select chat_private.grant_execute('chat_public.delete_chat(uuid)', '{chat_anonymous, chat_user}');

-- A poller's read of one structured request by id: the request, or why there is none. A request whose chat was
-- deleted answers SODEL for deleted_request_days (then, like one that never existed or is not the caller's, SONTF).
create or replace function chat_public.find_structured_output_request(request_id uuid)
returns chat_public.structured_output_requests as $$
declare
  v_user uuid := chat_private.require_user();
  v_request chat_public.structured_output_requests;
begin
  select r.* into v_request from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.id = find_structured_output_request.request_id and c.owner_id = v_user;
  if found then
    return v_request;
  end if;
  if exists (select 1 from chat_private.deleted_requests d
             where d.id = find_structured_output_request.request_id and d.owner_id = v_user) then
    raise exception 'structured output request deleted with its chat' using errcode = 'SODEL', column = 'request_id';
  end if;
  raise exception 'structured output request not found' using errcode = 'SONTF', column = 'request_id';
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.find_structured_output_request(uuid) is
  E'One of your structured output requests by id. Errors: NOT_FOUND when there is none of yours with that id; REQUEST_DELETED when its chat was deleted (kept for the deleted_request_days setting).';
select chat_private.grant_execute('chat_public.find_structured_output_request(uuid)', '{chat_anonymous, chat_user}');

-- Operator: one chat (any owner's), with a report of what went.
create or replace function chat_private.operator_delete_chat(p_chat_id uuid) returns jsonb as $$
declare
  v_report jsonb;
begin
  v_report := chat_private._delete_chats(array[p_chat_id]);
  if (v_report ->> 'chats')::int = 0 then
    raise exception 'chat not found' using errcode = 'CHNTF', column = 'chat_id';
  end if;
  return v_report;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_delete_chat(uuid) is
  E'Operator: deletes a chat of any owner with its subagent chats and everything that names them; returns counts of what went.';
select chat_private.grant_execute('chat_private.operator_delete_chat(uuid)', '{chat_operator}');

-- Operator: a user and everything of theirs, in one transaction: chats (as _delete_chats), batches with their items,
-- idempotency keys, deleted-request ids, webhook endpoints (the user's only secrets: their signing secrets) with
-- their deliveries, and the user row. Tokens carry the user's id as `sub`, and that id is gone for good (ids are
-- random uuids, a new user of the same name gets another), so every token of the user is refused at once: writes
-- with NOAUT (require_user), and reads match no row (RLS on owner_id). The JWT signing secret is the server's.
create or replace function chat_private.operator_delete_user(p_user_id uuid) returns jsonb as $$
declare
  v_user chat_public.users;
  v_report jsonb;
  v_batches integer;
  v_items integer;
  v_keys integer;
  v_tombstones integer;
  v_endpoints integer;
  v_deliveries integer;
begin
  select * into v_user from chat_public.users where id = p_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'USNTF', column = 'user_id';
  end if;
  v_report := chat_private._delete_chats(array(select id from chat_public.chats where owner_id = p_user_id
                                               and parent_chat_id is null));
  select count(*) into v_items from chat_public.batch_items i join chat_public.batches b on b.id = i.batch_id
  where b.owner_id = p_user_id;
  with gone as (delete from chat_public.batches where owner_id = p_user_id returning 1) select count(*) into v_batches from gone;
  select count(*) into v_deliveries from chat_private.webhook_deliveries d
  join chat_private.webhook_endpoints e on e.id = d.endpoint_id where e.owner_id = p_user_id;
  with gone as (delete from chat_private.webhook_endpoints where owner_id = p_user_id returning 1)
  select count(*) into v_endpoints from gone;
  with gone as (delete from chat_private.idempotency_keys where owner_id = p_user_id returning 1) select count(*) into v_keys from gone;
  with gone as (delete from chat_private.deleted_requests where owner_id = p_user_id returning 1)
  select count(*) into v_tombstones from gone;
  delete from chat_public.users where id = p_user_id;
  return jsonb_build_object('user_id', v_user.id, 'name', v_user.name) || v_report || jsonb_build_object(
    'batches', v_batches, 'batch_items', v_items, 'idempotency_keys', v_keys, 'deleted_request_ids', v_tombstones,
    'webhook_endpoints', v_endpoints, 'webhook_deliveries', coalesce((v_report ->> 'webhook_deliveries')::int, 0) + v_deliveries);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_delete_user(uuid) is
  E'Operator: deletes a user with every chat, batch, idempotency key, deleted-request id and webhook endpoint (with its secrets and deliveries) of theirs; their tokens are refused from the commit on. Returns counts of what went.';
select chat_private.grant_execute('chat_private.operator_delete_user(uuid)', '{chat_operator}');

-- What retention would delete now, per rule (0 when the rule is off). One owner of the rules: run_retention deletes
-- exactly what these candidates list.
create or replace function chat_private.retention_candidates(p_rule text, p_limit integer)
returns table (id uuid) as $$
declare
  v_days integer;
begin
  v_days := chat_private.setting_int(case p_rule when 'archived_chats' then 'retention_archived_chat_days'
                                                 when 'idle_chats' then 'retention_idle_chat_days'
                                                 when 'finished_batches' then 'retention_finished_batch_days'
                                                 when 'deleted_requests' then 'deleted_request_days' end);
  if coalesce(v_days, 0) <= 0 then
    return;
  end if;
  if p_rule = 'archived_chats' then
    return query select c.id from chat_public.chats c
      where c.archived and c.parent_chat_id is null and c.updated_at < now() - make_interval(days => v_days)
      limit p_limit;
  elsif p_rule = 'idle_chats' then
    return query select c.id from chat_public.chats c
      where not c.archived and c.parent_chat_id is null and c.status in ('waiting', 'error')
        and c.updated_at < now() - make_interval(days => v_days)
        and not exists (select 1 from chat_public.batch_items i where i.chat_id = c.id)
      limit p_limit;
  elsif p_rule = 'finished_batches' then
    return query select b.id from chat_public.batches b
      where b.finished_at < now() - make_interval(days => v_days) order by b.finished_at limit p_limit;
  elsif p_rule = 'deleted_requests' then
    return query select d.id from chat_private.deleted_requests d
      where d.deleted_at < now() - make_interval(days => v_days) limit p_limit;
  end if;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.retention_candidates(text, integer)', '{}');

-- Transient rows due now, per rule, oldest first (none when the rule's setting is 0): idempotency keys clients sent
-- (a key chatd minted for a batch item or a subagent, batch:/agent:, stays while its chat does: a re-dispatch or a
-- retried spawn finds its chat through it, and _delete_chats removes it with the chat); webhook deliveries that are
-- delivered or failed; Graphile Worker jobs that failed permanently (a job of a chat goes with the chat anyway).
-- One owner of these rules: run_retention deletes what this lists, and retention_due counts it.
create or replace function chat_private.transient_candidates(p_rule text, p_limit integer)
returns table (owner_id uuid, key text, id bigint) as $$
declare
  v_days integer;
begin
  v_days := chat_private.setting_int(case p_rule when 'idempotency_keys' then 'idempotency_key_days'
                                                 when 'webhook_deliveries' then 'webhook_delivery_days'
                                                 when 'failed_jobs' then 'failed_job_days' end);
  if coalesce(v_days, 0) <= 0 then
    return;
  end if;
  if p_rule = 'idempotency_keys' then
    return query select k.owner_id, k.key, null::bigint from chat_private.idempotency_keys k
      where k.created_at < now() - make_interval(days => v_days) and k.key not like 'batch:%' and k.key not like 'agent:%'
      order by k.created_at limit p_limit;
  elsif p_rule = 'webhook_deliveries' then
    return query select null::uuid, null::text, d.id from chat_private.webhook_deliveries d
      where d.created_at < now() - make_interval(days => v_days) and d.status <> 'pending'
      order by d.created_at limit p_limit;
  elsif p_rule = 'failed_jobs' then
    return query select null::uuid, null::text, j.id from graphile_worker.jobs j
      where j.attempts >= j.max_attempts and j.locked_at is null and j.updated_at < now() - make_interval(days => v_days)
      order by j.updated_at limit p_limit;
  end if;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.transient_candidates(text, integer)', '{}');

-- One small step of retention, in the caller's transaction: up to retention_batch_size chats (archived first, then
-- idle), or the chats of the oldest due batch (the batch itself once it has none left), and expired deleted-request
-- ids, and up to retention_batch_size transient rows of each transient_candidates rule. Candidates a client has
-- locked are skipped (SKIP LOCKED), so no client waits on retention and retention waits on no client; a skipped one
-- is taken by a later run. Readers never wait: deletes take row locks only. Returns what went; all zeros means
-- nothing is due.
create or replace function chat_private.run_retention() returns jsonb as $$
declare
  v_limit integer := greatest(coalesce(chat_private.setting_int('retention_batch_size'), 50), 1);
  v_chats uuid[];
  v_batch uuid;
  v_report jsonb;
  v_batches integer := 0;
  v_requests integer;
  v_keys integer;
  v_deliveries integer;
  v_jobs integer;
begin
  select coalesce(array_agg(s.id), '{}') into v_chats from (
    select c.id from chat_public.chats c
    where c.id in (select id from chat_private.retention_candidates('archived_chats', v_limit)
                   union all select id from chat_private.retention_candidates('idle_chats', v_limit))
    limit v_limit for update skip locked) s;
  if cardinality(v_chats) < v_limit then
    select b.id into v_batch from chat_public.batches b
    where b.id in (select id from chat_private.retention_candidates('finished_batches', 1)) for update skip locked;
    if v_batch is not null then
      v_chats := v_chats || array(select i.chat_id from chat_public.batch_items i
                                  where i.batch_id = v_batch and i.chat_id is not null
                                  limit v_limit - cardinality(v_chats));
      if not exists (select 1 from chat_public.batch_items i where i.batch_id = v_batch and i.chat_id is not null
                     and not i.chat_id = any(v_chats)) then
        v_batches := 1;
      end if;
    end if;
  end if;
  v_report := chat_private._delete_chats(v_chats);
  if v_batches = 1 then
    delete from chat_private.webhook_deliveries where subject_id = 'batch_' || replace(v_batch::text, '-', '');
    delete from chat_public.batches where id = v_batch;
  end if;
  with gone as (delete from chat_private.deleted_requests where id in
                  (select id from chat_private.retention_candidates('deleted_requests', v_limit)) returning 1)
  select count(*) into v_requests from gone;
  delete from chat_private.idempotency_keys k
  using chat_private.transient_candidates('idempotency_keys', v_limit) t
  where k.owner_id = t.owner_id and k.key = t.key;
  get diagnostics v_keys = row_count;
  -- The status is checked again on the row itself: a replay may have made the delivery pending meanwhile.
  delete from chat_private.webhook_deliveries d
  where d.id in (select t.id from chat_private.transient_candidates('webhook_deliveries', v_limit) t)
    and d.status <> 'pending';
  get diagnostics v_deliveries = row_count;
  select count(*) into v_jobs from graphile_worker.complete_jobs(array(
    select t.id from chat_private.transient_candidates('failed_jobs', v_limit) t));
  return jsonb_build_object('chats', (v_report ->> 'chats')::int, 'batches', v_batches, 'deleted_request_ids', v_requests,
    'idempotency_keys', v_keys, 'webhook_deliveries', v_deliveries, 'failed_jobs', v_jobs);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.run_retention() is
  E'One retention step (the worker''s data_retention task calls it until nothing is due): deletes up to retention_batch_size due chats, or chats of the oldest due batch, expired deleted-request ids, and expired idempotency keys, finished webhook deliveries and permanently failed jobs. Skips rows a client holds.';
select chat_private.grant_execute('chat_private.run_retention()', '{chat_worker, chat_operator}');

-- `chatd ops status`: what retention would delete now, per rule, with the rule's setting.
create or replace function chat_private.retention_due() returns table (rule text, days integer, due bigint) as $$
  select r.rule, coalesce(chat_private.setting_int(r.setting), 0),
    case when r.transient then (select count(*) from chat_private.transient_candidates(r.rule, 2147483647))
         else (select count(*) from chat_private.retention_candidates(r.rule, 2147483647)) end
  from (values ('archived_chats', 'retention_archived_chat_days', false),
               ('idle_chats', 'retention_idle_chat_days', false),
               ('finished_batches', 'retention_finished_batch_days', false),
               ('deleted_requests', 'deleted_request_days', false),
               ('idempotency_keys', 'idempotency_key_days', true),
               ('webhook_deliveries', 'webhook_delivery_days', true),
               ('failed_jobs', 'failed_job_days', true))
       r (rule, setting, transient);
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.retention_due() is
  E'Per retention rule: its setting in days (0: off) and how many chats, batches, deleted-request ids, idempotency keys, webhook deliveries or failed jobs it would delete now.';
select chat_private.grant_execute('chat_private.retention_due()', '{chat_operator}');
