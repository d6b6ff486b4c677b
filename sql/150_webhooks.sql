-- The OpenAI-compatible surface and completion webhooks (tables: migrations/0100). A Response is a structured
-- output request: these functions create one with chatd's own transition (create_chat_as, as the calling user),
-- read it with its receipt, and cancel it with the client transitions. Webhook deliveries are written by the
-- request's terminal update, in the receipt's transaction, and sent by the worker's `webhook_deliver` task, which
-- records each attempt here; this file owns the retry schedule.

-- Creates the Response: the chat and its request through create_chat_as, then the /v1 record, in one transaction.
-- The idempotency key (`Idempotency-Key`) is looked up first: the same key with the same body returns the first
-- Response; with another body it is refused (IDKEY), so a retried POST never creates a second request.
create or replace function chat_public.openai_create_response(p_content jsonb, p_response_format text,
  p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text,
  p_idempotency_key text) returns uuid as $$
declare
  v_user uuid := chat_private.require_user();
  v_previous chat_private.openai_responses;
  v_result chat_public.chat_input_result;
begin
  if p_idempotency_key is not null then
    select * into v_previous from chat_private.openai_responses
    where owner_id = v_user and idempotency_key = p_idempotency_key;
    if found then
      if v_previous.body_sha256 <> p_body_sha256 then
        raise exception 'this Idempotency-Key was already used with another request body'
          using errcode = 'IDKEY', column = 'idempotency_key';
      end if;
      return v_previous.request_id;
    end if;
  end if;
  v_result := chat_private.create_chat_as(v_user, p_content, chat_private.parse_response_format(p_response_format),
    p_model, null, p_workspace, p_tools, false, case when p_idempotency_key is not null then 'openai:' || p_idempotency_key end);
  if v_result.structured_output_request_id is null then
    raise exception 'a Response needs a structured request' using errcode = 'CIINV', column = 'response_format';
  end if;
  insert into chat_private.openai_responses (request_id, chat_id, owner_id, background, echo, body_sha256, idempotency_key)
  values (v_result.structured_output_request_id, v_result.chat_id, v_user, p_background, p_echo, p_body_sha256,
          p_idempotency_key)
  on conflict (request_id) do nothing;
  return v_result.structured_output_request_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_create_response(jsonb, text, text, text, jsonb, boolean, jsonb, text, text) is
  E'@behavior -*\nCreates an OpenAI Response (a chat whose first message carries a structured request) for /v1/responses.';
select chat_private.grant_execute('chat_public.openai_create_response(jsonb, text, text, text, jsonb, boolean, jsonb, text, text)', '{chat_user}');

-- One Response as the caller sees it: the request, its receipt's exact value text, where its chat stands, and the
-- /v1 record (null for a request created through GraphQL or SQL, which /v1 reads too). No row: not the caller's.
create or replace function chat_public.openai_response(p_id uuid) returns table (
  request_id uuid, chat_id uuid, created_at timestamptz, finished_at timestamptz, status text, error_code text,
  error_message text, value_json text, input_tokens bigint, output_tokens bigint, model_config_id text,
  chat_status text, queued boolean, background boolean, echo jsonb) as $$
  select r.id, r.chat_id, r.created_at, r.finished_at, r.status::text, r.error_code, r.error_message,
         (m.structured_output -> 'value')::text,
         r.input_tokens, r.output_tokens, coalesce(r.model_config_id, c.model_config_id), c.status::text,
         exists (select 1 from chat_public.chat_queued_messages q where q.structured_output_request_id = r.id),
         coalesce(o.background, false), o.echo
  from chat_public.structured_output_requests r
  join chat_public.chats c on c.id = r.chat_id
  left join chat_public.chat_messages m on m.id = r.receipt_message_id
  left join chat_private.openai_responses o on o.request_id = r.id
  where r.id = p_id and c.owner_id = chat_private.require_user();
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_response(uuid) is
  E'@behavior -*\nReads one Response for /v1/responses/{id} (the caller''s requests only).';
select chat_private.grant_execute('chat_public.openai_response(uuid)', '{chat_user}');

-- Cancels the request whatever its state: a queued one is deleted from the queue, the running turn that carries it
-- is interrupted; a finished one is left as it is (cancel is idempotent). Returns false when the id is not the
-- caller's.
create or replace function chat_public.openai_cancel_response(p_id uuid) returns boolean as $$
declare
  v_user uuid := chat_private.require_user();
  v_request chat_public.structured_output_requests;
  v_chat chat_public.chats;
  v_queued bigint;
begin
  select r.* into v_request from chat_public.structured_output_requests r
  join chat_public.chats c on c.id = r.chat_id where r.id = p_id and c.owner_id = v_user;
  if not found then
    return false;
  end if;
  if v_request.status <> 'pending' then
    return true;
  end if;
  select q.id into v_queued from chat_public.chat_queued_messages q where q.structured_output_request_id = p_id;
  if v_queued is not null then
    perform chat_public.delete_queued_message(v_queued);
    return true;
  end if;
  select * into v_chat from chat_public.chats where id = v_request.chat_id;
  if v_chat.status in ('running', 'requires_action') then
    perform chat_public.interrupt_chat(v_chat.id);
  end if;
  return true;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_cancel_response(uuid) is
  E'@behavior -*\nCancels a Response for /v1/responses/{id}/cancel (idempotent; a finished one stays as it is).';
select chat_private.grant_execute('chat_public.openai_cancel_response(uuid)', '{chat_user}');

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
    perform graphile_worker.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      run_at => now(), max_attempts => 3);
  end loop;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_enqueue(uuid, text, text, timestamptz)', '{}');

create or replace function chat_private.tg_structured_output_requests__webhook() returns trigger as $$
begin
  perform chat_private.webhook_enqueue(c.owner_id, chat_private.webhook_response_event(new.status, new.error_code),
    'resp_' || replace(new.id::text, '-', ''), coalesce(new.finished_at, now()))
  from chat_public.chats c where c.id = new.chat_id;
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_structured_output_requests__webhook()', '{}');

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
-- anything else is retried on the schedule, later when the receiver's Retry-After asks for more (capped at a day),
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
  v_delay := greatest(v_delay, make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400)));
  update chat_private.webhook_deliveries set attempts = attempts + 1, next_attempt_at = now() + v_delay
  where id = p_delivery_id;
  perform graphile_worker.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    run_at => now() + v_delay, max_attempts => 3);
  return 'retry';
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_record_attempt(bigint, integer, text, integer)', '{chat_worker}');

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

-- Sends a delivery again (a failed one, or a delivered one the receiver lost), with the same event id.
create or replace function chat_private.webhook_replay(p_delivery_id bigint) returns boolean as $$
begin
  update chat_private.webhook_deliveries set status = 'pending', next_attempt_at = now() where id = p_delivery_id;
  if not found then
    return false;
  end if;
  perform graphile_worker.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    run_at => now(), max_attempts => 3);
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
    perform graphile_worker.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      job_key := 'webhook-sweep:' || v_delivery, max_attempts := 3);
    update chat_private.webhook_deliveries set next_attempt_at = now() where id = v_delivery;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.webhook_sweep(interval)', '{chat_worker}');
