-- Completion webhooks (tables: migrations/0100). Deliveries are written by the request's terminal update, in the
-- receipt's transaction, and sent by the worker's `webhook_deliver` task, which records each attempt here; this file
-- owns the retry schedule. The /v1 Responses themselves are sql/155_openai_responses.sql.

-- The OpenAI event a receipt announces: a refusal is a completed Response with a refusal part, as OpenAI does.
-- Without a SET clause, so PostgreSQL inlines it into the receipt trigger's statement instead of planning a SQL
-- function at every receipt; it names no relation, and its callers pin search_path.
create or replace function chat_private.webhook_response_event(p_status chat_public.structured_output_status,
  p_code text) returns text as $$
  select case
    when p_status = 'succeeded' or p_code = 'refused' then 'response.completed'
    when p_status = 'failed' then 'response.failed'
    else 'response.cancelled' end;
$$ language sql immutable;
select chat_private.grant_execute('chat_private.webhook_response_event(chat_public.structured_output_status, text)', '{}');

-- One delivery per enabled endpoint of the owner that wants the event, and its first job, in the caller's
-- transaction. The body is fixed here (compact, OpenAI's key order); the worker signs and sends these bytes.
create or replace function chat_private.webhook_enqueue(p_owner uuid, p_event text, p_subject text,
  p_created_at timestamptz) returns void as $$
declare
  v_endpoint uuid;
  v_event_id text;
  v_delivery bigint;
begin
  for v_endpoint in select e.id from chat_private.webhook_endpoints e
                    where e.owner_id = p_owner and e.enabled and p_event = any (e.events) order by e.id loop
    v_event_id := 'evt_' || replace(gen_random_uuid()::text, '-', '');
    insert into chat_private.webhook_deliveries (endpoint_id, event_id, event_type, subject_id, body, next_attempt_at)
    values (v_endpoint, v_event_id, p_event, p_subject,
            format('{"id":"%s","object":"event","created_at":%s,"type":"%s","data":{"id":"%s"}}',
                   v_event_id, floor(extract(epoch from p_created_at))::bigint, p_event, p_subject), now())
    returning id into v_delivery;
    perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      p_run_at => now(), p_max_attempts => 3);
  end loop;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_enqueue(uuid, text, text, timestamptz)', '{}');

-- The id of a request's newest Response (data.id of its events): after client tool rounds, the newest round's.
-- PL/pgSQL: a receipt's trigger calls it, and a SQL function with a SET clause is parsed and planned at every call
-- (as SQL it took 0.13 of a structured turn's ~3 ms of server CPU: `CHATD_BENCH_PROFILE=10 npm run
-- bench:floor-alternate -- <checkout> 1 200 1`), where PL/pgSQL keeps its plan for the session.
create or replace function chat_private.webhook_response_subject(p_request_id uuid) returns text as $$
begin
  return 'resp_' || replace(coalesce((select x.id from chat_private.openai_response_rounds x
                                      where x.request_id = p_request_id order by x.round desc limit 1),
                                     p_request_id)::text, '-', '');
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_response_subject(uuid)', '{}');

-- Every receipt fires it, and most owners have no endpoint: the event and its subject are worked out only for an
-- owner with an enabled one (webhook_enqueue decides which of them want the event).
create or replace function chat_private.tg_structured_output_requests__webhook() returns trigger as $$
begin
  perform chat_private.webhook_enqueue(c.owner_id, chat_private.webhook_response_event(new.status, new.error_code),
    chat_private.webhook_response_subject(new.id), coalesce(new.finished_at, now()))
  from chat_public.chats c
  where c.id = new.chat_id
    and exists (select 1 from chat_private.webhook_endpoints e where e.owner_id = c.owner_id and e.enabled);
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_structured_output_requests__webhook()', '{}');

-- A turn that stops for client tools completes its request's newest Response with function calls: announced as
-- response.completed, in the transaction that pauses the turn (migrations/0162). A turn without a pending request
-- (a plain chat) has no Response to announce.
create or replace function chat_private.tg_chats__webhook_function_calls() returns trigger as $$
declare
  v_request uuid := chat_private._active_request(new.id);
begin
  if v_request is not null then
    perform chat_private.webhook_enqueue(new.owner_id, 'response.completed', chat_private.webhook_response_subject(v_request),
      now());
  end if;
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_chats__webhook_function_calls()', '{}');

create or replace function chat_private.tg_batches__webhook() returns trigger as $$
begin
  perform chat_private.webhook_enqueue(new.owner_id,
    case new.status when 'completed' then 'batch.completed' when 'failed' then 'batch.failed' else 'batch.cancelled' end,
    'batch_' || replace(new.id::text, '-', ''), now());
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_batches__webhook()', '{}');

-- Standard Webhooks' schedule after each failed attempt (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h):
-- ten attempts over about three days, then the delivery fails (replayable).
create or replace function chat_private.webhook_retry_delay(p_attempts integer) returns interval as $$
  select (array['5 seconds', '5 minutes', '30 minutes', '2 hours', '5 hours', '10 hours', '14 hours', '20 hours',
                '24 hours']::interval[])[p_attempts];
$$ language sql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_retry_delay(integer)', '{}');

-- What the worker needs to send a pending delivery: the target, the body and the signing secrets (the previous one
-- too while it is valid). No row when the delivery is not pending or its endpoint is disabled.
create or replace function chat_private.webhook_delivery_for_send(p_delivery_id bigint) returns table (
  event_id text, url text, body text, secrets text[], attempts integer) as $$
  select d.event_id, e.url, d.body,
         array_remove(array[e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end], null),
         d.attempts
  from chat_private.webhook_deliveries d join chat_private.webhook_endpoints e on e.id = d.endpoint_id
  where d.id = p_delivery_id and d.status = 'pending' and e.enabled;
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_delivery_for_send(bigint)', '{chat_worker}');

-- Records one attempt and decides what follows: 2xx delivered; 410 disables the endpoint (the delivery fails);
-- anything else is retried on the schedule (with jitter), later when the receiver's Retry-After asks for more (capped at a day),
-- and fails after the tenth attempt. The next attempt is a job with an explicit run_at, not the queue's backoff.
create or replace function chat_private.webhook_record_attempt(p_delivery_id bigint, p_status_code integer,
  p_error text, p_retry_after_seconds integer) returns text as $$
declare
  v_delivery chat_private.webhook_deliveries;
  v_delay interval;
  v_outcome text;
begin
  select * into v_delivery from chat_private.webhook_deliveries where id = p_delivery_id for update;
  if not found or v_delivery.status <> 'pending' then
    return 'skipped';
  end if;
  insert into chat_private.webhook_attempts (delivery_id, attempt, status_code, error)
  values (p_delivery_id, v_delivery.attempts + 1, p_status_code, left(p_error, 500));
  if p_status_code between 200 and 299 then
    update chat_private.webhook_deliveries set status = 'delivered', attempts = attempts + 1, delivered_at = now(),
      next_attempt_at = null where id = p_delivery_id;
    return 'delivered';
  end if;
  if p_status_code = 410 then
    update chat_private.webhook_endpoints set enabled = false, disabled_reason = 'the receiver answered 410 Gone'
    where id = v_delivery.endpoint_id;
    v_outcome := 'disabled';
  else
    v_delay := chat_private.webhook_retry_delay(v_delivery.attempts + 1);
    v_outcome := case when v_delay is null then 'failed' else 'retry' end;
  end if;
  if v_outcome <> 'retry' then
    update chat_private.webhook_deliveries set status = 'failed', attempts = attempts + 1, next_attempt_at = null
    where id = p_delivery_id;
    return v_outcome;
  end if;
  -- Jitter, as Standard Webhooks recommends: up to a fifth later than the schedule, so the retries of deliveries that
  -- failed together (a receiver's outage) do not all arrive together. A Retry-After is honoured as asked.
  v_delay := greatest(v_delay * (1 + 0.2 * random()), make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400)));
  update chat_private.webhook_deliveries set attempts = attempts + 1, next_attempt_at = now() + v_delay
  where id = p_delivery_id;
  perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    p_run_at => now() + v_delay, p_max_attempts => 3);
  return 'retry';
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_record_attempt(bigint, integer, text, integer)', '{chat_worker}');

-- A delivery is pending only while its endpoint is enabled: disabling it (410 above, or an operator's update) fails
-- its pending deliveries, which stay in the log, replayable once it is enabled again (trigger: migrations/0190).
create or replace function chat_private.tg_webhook_endpoints__fail_pending_deliveries() returns trigger as $$
begin
  update chat_private.webhook_deliveries set status = 'failed', next_attempt_at = null
  where endpoint_id = new.id and status = 'pending';
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_webhook_endpoints__fail_pending_deliveries()', '{}');

-- Operator operations (`chatd webhooks`, as chat_operator). Secrets leave the database only once: `webhook_add` and
-- `webhook_rotate` take the secret the CLI generated and printed; listings never show them.
create or replace function chat_private.webhook_add(p_owner uuid, p_url text, p_events text[], p_secret text)
returns uuid as $$
  insert into chat_private.webhook_endpoints (owner_id, url, events, secret)
  values (p_owner, p_url, coalesce(p_events, array['response.completed', 'response.failed', 'response.cancelled',
    'response.incomplete']), p_secret)
  returning id;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_add(uuid, text, text[], text)', '{chat_operator}');

-- The new secret signs from now on; the old one signs beside it for p_overlap, so receivers can switch.
create or replace function chat_private.webhook_rotate(p_endpoint uuid, p_secret text, p_overlap interval)
returns boolean as $$
  update chat_private.webhook_endpoints
  set previous_secret = case when p_overlap > interval '0' then secret end,
      previous_secret_expires_at = case when p_overlap > interval '0' then now() + p_overlap end,
      secret = p_secret
  where id = p_endpoint
  returning true;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_rotate(uuid, text, interval)', '{chat_operator}');

-- Sends a delivery again (a failed one, or a delivered one the receiver lost), with the same event id. False when
-- there is no such delivery or its endpoint is disabled (a pending delivery's endpoint is enabled: see above).
create or replace function chat_private.webhook_replay(p_delivery_id bigint) returns boolean as $$
begin
  update chat_private.webhook_deliveries d set status = 'pending', next_attempt_at = now()
  from chat_private.webhook_endpoints e
  where d.id = p_delivery_id and e.id = d.endpoint_id and e.enabled;
  if not found then
    return false;
  end if;
  perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    p_run_at => now(), p_max_attempts => 3);
  return true;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_replay(bigint)', '{chat_operator}');

create or replace function chat_private.webhook_remove(p_endpoint uuid) returns boolean as $$
  delete from chat_private.webhook_endpoints where id = p_endpoint returning true;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_remove(uuid)', '{chat_operator}');

-- Endpoints without their secrets, with their deliveries counted by status.
create or replace function chat_private.webhook_list(p_owner uuid) returns table (
  id uuid, owner_id uuid, url text, events text[], enabled boolean, disabled_reason text, rotating boolean,
  created_at timestamptz, pending bigint, delivered bigint, failed bigint) as $$
  select e.id, e.owner_id, e.url, e.events, e.enabled, e.disabled_reason, coalesce(e.previous_secret_expires_at > now(), false),
         e.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
  from chat_private.webhook_endpoints e left join chat_private.webhook_deliveries d on d.endpoint_id = e.id
  where p_owner is null or e.owner_id = p_owner
  group by e.id order by e.created_at, e.id;
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_list(uuid)', '{chat_operator}');

-- Recovery for delivery jobs a crashed worker left locked (Graphile Worker keeps them for 4 hours) or lost: a pending
-- delivery overdue by p_stale gets a fresh job (a job_key on a locked job makes a new one) and a new due time, so a
-- sweep re-enqueues it once. A send that was in flight may be repeated: deliveries are at least once.
create or replace function chat_private.webhook_sweep(p_stale interval default '1 minute') returns integer as $$
declare
  v_delivery bigint;
  v_count integer := 0;
begin
  for v_delivery in
    select d.id from chat_private.webhook_deliveries d
    where d.status = 'pending' and d.next_attempt_at <= now() - p_stale
    for update of d skip locked
  loop
    perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      p_job_key => 'webhook-sweep:' || v_delivery, p_max_attempts => 3);
    update chat_private.webhook_deliveries set next_attempt_at = now() where id = v_delivery;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_sweep(interval)', '{chat_worker}');

-- The GraphQL side: each user manages their own endpoints (the functions filter by the token's user; the tables
-- have no client policy). At most 16 endpoints per user. The secret is generated here and answered once, by add and
-- rotate; nothing reads it back.
comment on type chat_public.webhook_endpoint is
  E'A completion webhook endpoint (Standard Webhooks signatures), without its secrets. `rotating`: the previous secret still signs beside the new one. `pending`, `delivered`, `failed` count its deliveries.';
comment on type chat_public.webhook_endpoint_secret is
  E'The signing secret (`whsec_...`) of a new or rotated endpoint. It is shown this once: store it now.';

create or replace function chat_private.webhook_check_url(p_url text) returns void as $$
begin
  if p_url is null or octet_length(p_url) > 2048 or p_url !~ '^https?://[^/?#@[:space:]]+([/?#][^[:space:]]*)?$' then
    raise exception 'url must be an absolute http(s) URL of at most 2048 bytes, without credentials'
      using errcode = 'CIINV', column = 'url';
  end if;
end;
$$ language plpgsql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_check_url(text)', '{}');

create or replace function chat_public.add_webhook_endpoint(url text, events text[] default null)
returns chat_public.webhook_endpoint_secret as $$
declare
  v_user uuid := chat_private.require_user();
  v_secret text := 'whsec_' || encode(gen_random_bytes(32), 'base64');
  v_events text[] := coalesce(add_webhook_endpoint.events, array['response.completed', 'response.failed',
    'response.cancelled', 'response.incomplete']);
  v_id uuid;
begin
  perform chat_private.webhook_check_url(add_webhook_endpoint.url);
  if cardinality(v_events) = 0 or not v_events <@ array['response.completed', 'response.failed', 'response.cancelled',
       'response.incomplete', 'batch.completed', 'batch.failed', 'batch.cancelled'] then
    raise exception 'events must be some of response.completed, response.failed, response.cancelled, response.incomplete, batch.completed, batch.failed, batch.cancelled'
      using errcode = 'CIINV', column = 'events';
  end if;
  -- Serializes one user's adds, so two at once cannot both pass the cap.
  perform 1 from chat_public.users u where u.id = v_user for update;
  if (select count(*) from chat_private.webhook_endpoints e where e.owner_id = v_user) >= 16 then
    raise exception 'a user has at most 16 webhook endpoints; remove one first' using errcode = 'CIINV', column = 'url';
  end if;
  v_id := chat_private.webhook_add(v_user, add_webhook_endpoint.url, v_events, v_secret);
  return (v_id, v_secret)::chat_public.webhook_endpoint_secret;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.add_webhook_endpoint(text, text[]) is
  E'Adds a completion webhook endpoint for the caller. `events` default to the four response.* events. The answer carries the signing secret, shown only here.';
select chat_private.grant_execute('chat_public.add_webhook_endpoint(text, text[])', '{chat_user}');

create or replace function chat_public.webhook_endpoints() returns setof chat_public.webhook_endpoint as $$
  select l.id, l.url, l.events, l.enabled, l.disabled_reason, l.rotating, l.created_at, l.pending, l.delivered, l.failed
  from chat_private.webhook_list(chat_private.require_user()) l;
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.webhook_endpoints() is E'The caller''s webhook endpoints, oldest first, without their secrets.';
select chat_private.grant_execute('chat_public.webhook_endpoints()', '{chat_user}');

-- The caller's endpoint, locked; WHNTF for anyone else's, as for one that does not exist.
create or replace function chat_private.webhook_own_endpoint(p_id uuid) returns uuid as $$
begin
  perform 1 from chat_private.webhook_endpoints e where e.id = p_id and e.owner_id = chat_private.require_user() for update;
  if not found then
    raise exception 'webhook endpoint not found' using errcode = 'WHNTF';
  end if;
  return p_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_own_endpoint(uuid)', '{}');

create or replace function chat_public.remove_webhook_endpoint(endpoint_id uuid) returns uuid as $$
begin
  perform chat_private.webhook_remove(chat_private.webhook_own_endpoint(remove_webhook_endpoint.endpoint_id));
  return remove_webhook_endpoint.endpoint_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.remove_webhook_endpoint(uuid) is
  E'Removes one of the caller''s webhook endpoints with its delivery log. Returns its id.';
select chat_private.grant_execute('chat_public.remove_webhook_endpoint(uuid)', '{chat_user}');

-- A new secret; the old one keeps signing for overlap_hours (0 to 168), so receivers can switch without a gap.
create or replace function chat_public.rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer default 24)
returns chat_public.webhook_endpoint_secret as $$
declare
  v_secret text := 'whsec_' || encode(gen_random_bytes(32), 'base64');
begin
  if overlap_hours is null or overlap_hours < 0 or overlap_hours > 168 then
    raise exception 'overlap_hours must be between 0 and 168' using errcode = 'CIINV', column = 'overlap_hours';
  end if;
  perform chat_private.webhook_rotate(chat_private.webhook_own_endpoint(rotate_webhook_endpoint_secret.endpoint_id),
    v_secret, make_interval(hours => overlap_hours));
  return (rotate_webhook_endpoint_secret.endpoint_id, v_secret)::chat_public.webhook_endpoint_secret;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.rotate_webhook_endpoint_secret(uuid, integer) is
  E'Gives one of the caller''s endpoints a new signing secret, shown only here; the previous one signs beside it for `overlapHours` (0 to 168, default 24).';
select chat_private.grant_execute('chat_public.rotate_webhook_endpoint_secret(uuid, integer)', '{chat_user}');
