-- Batch runs (tables in migrations/0003_batches.sql). Dispatch is Postgres-centric: a batch starts `validating`;
-- the `batch_validate` job (enqueued with the batch) validates the stored schema with src/structured and calls
-- finish_batch_validation, which starts the first items or fails the batch. From then on a trigger on the
-- structured request's terminal status marks its item done and starts the next pending item in the same
-- transaction, so at most `concurrency` items are ever running and no item is lost between transactions.
--
-- Lock order: chat, then batch. finish_turn (and every other receipt writer) holds the chat lock when the trigger
-- locks the batch row; functions that lock the batch first (validation, cancel, sweep) never lock an existing chat.
-- Batch functions are not chat transitions, so they have no rows in chat_private.transition_rules.

comment on type chat_public.batch_item_counts is E'Items of a batch by status.';

create or replace function chat_private.notify_batch(p_batch_id uuid, p_change text) returns void as $$
  select pg_notify('chatd:batch:' || b.id, json_build_object('batch_id', b.id, 'change', p_change,
    'status', b.status)::text)
  from chat_public.batches b where b.id = p_batch_id;
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.notify_batch(uuid, text)', '{}');

-- Shared by the client and operator entry points. p_format is the parsed json_schema envelope (or null).
-- Items: [{line, content}] or [{line, error}] for lines the submitter already found invalid. Only their shape is
-- checked here; each item's content is checked when it is dispatched, so a bad line fails alone.
create or replace function chat_private.insert_batch(p_owner uuid, p_format jsonb, p_items jsonb, p_name text,
  p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text)
returns chat_public.batches as $$
declare
  v_batch chat_public.batches;
  v_model text;
  v_bad record;
  v_count integer;
begin
  if p_idempotency_key is not null then
    if length(p_idempotency_key) not between 1 and 200 then
      raise exception 'idempotency_key must have 1 to 200 characters' using errcode = 'CIINV', column = 'idempotency_key';
    end if;
    perform pg_advisory_xact_lock(hashtextextended(p_owner::text || ':batch:' || p_idempotency_key, 7010420));
    select * into v_batch from chat_public.batches where owner_id = p_owner and idempotency_key = p_idempotency_key;
    if found then
      return v_batch;
    end if;
  end if;
  if not chat_private.experiment_enabled('chat-structured-output') then
    raise exception 'structured output is disabled on this server (experiment chat-structured-output)'
      using errcode = 'RFOFF', column = 'response_format';
  end if;
  if p_format is null then
    raise exception 'a batch needs a json_schema response_format' using errcode = 'RFINV', column = 'response_format';
  end if;
  if p_name is not null and length(p_name) > 200 then
    raise exception 'name has more than 200 characters' using errcode = 'CIINV', column = 'name';
  end if;
  perform chat_private.check_workspace(p_workspace);
  if p_concurrency is null or p_concurrency not between 1 and 64 then
    raise exception 'concurrency must be between 1 and 64' using errcode = 'CIINV', column = 'concurrency';
  end if;
  select id into v_model from chat_private.model_configs m
  where m.enabled and (m.id = p_model_config_id or (p_model_config_id is null and m.is_default));
  if v_model is null then
    raise exception 'unknown model config' using errcode = 'CIINV', column = 'model_config_id';
  end if;
  if p_items is null or jsonb_typeof(p_items) <> 'array' or jsonb_array_length(p_items) = 0 then
    raise exception 'items must be a non-empty array' using errcode = 'CIINV', column = 'items';
  end if;
  v_count := jsonb_array_length(p_items);
  if v_count > 100000 then
    raise exception 'a batch holds at most 100000 items (got %)', v_count using errcode = 'BTLIM', column = 'items';
  end if;
  if octet_length(p_items::text) > 134217728 then
    raise exception 'a batch''s items are limited to 128 MiB' using errcode = 'BTLIM', column = 'items';
  end if;
  select i - 1 as index into v_bad from jsonb_array_elements(p_items) with ordinality e(v, i)
  where jsonb_typeof(v) <> 'object' or jsonb_typeof(v -> 'line') is distinct from 'number'
     or (v ->> 'line') !~ '^[1-9][0-9]{0,8}$'
     or (v -> 'content' is null) = (v -> 'error' is null)
     or jsonb_typeof(coalesce(v -> 'content', '[]')) <> 'array'
     or jsonb_typeof(coalesce(v -> 'error', '""')) <> 'string'
     or exists (select 1 from jsonb_object_keys(v) k where k not in ('line', 'content', 'error'))
  order by i limit 1;
  if found then
    raise exception 'items[%] must be {line, content} or {line, error} with a line number from 1', v_bad.index
      using errcode = 'CIINV', column = format('items[%s]', v_bad.index);
  end if;
  if (select count(distinct v ->> 'line') from jsonb_array_elements(p_items) v) <> v_count then
    raise exception 'item line numbers must be unique' using errcode = 'CIINV', column = 'items';
  end if;
  insert into chat_public.batches (owner_id, name, response_format, schema_sha256, model_config_id, workspace,
                                   concurrency, total_items, idempotency_key)
  values (p_owner, p_name, p_format, chat_private.schema_sha256(p_format -> 'schema'), v_model, p_workspace,
          p_concurrency, v_count, p_idempotency_key)
  returning * into v_batch;
  insert into chat_public.batch_items (batch_id, line, content, status, error_code, error_message, finished_at)
  select v_batch.id, (v ->> 'line')::integer, v -> 'content',
         case when v ? 'error' then 'failed' else 'pending' end::chat_public.batch_item_status,
         case when v ? 'error' then 'invalid_line' end, left(v ->> 'error', 2000),
         case when v ? 'error' then now() end
  from jsonb_array_elements(p_items) v;
  perform chat_private.add_job('batch_validate', json_build_object('batch_id', v_batch.id),
    p_job_key => 'batch-validate:' || v_batch.id, p_max_attempts => 5);
  perform chat_private.notify_batch(v_batch.id, 'created');
  return v_batch;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.insert_batch(uuid, jsonb, jsonb, text, text, text, integer, text)', '{}');

create or replace function chat_public.create_batch(
  response_format text,
  items jsonb,
  name text default null,
  model_config_id text default null,
  workspace text default null,
  concurrency integer default 4,
  idempotency_key text default null
) returns chat_public.batches as $$
  select * from chat_private.insert_batch(chat_private.require_user(),
    chat_private.parse_response_format(create_batch.response_format), create_batch.items, create_batch.name,
    create_batch.model_config_id, create_batch.workspace, create_batch.concurrency, create_batch.idempotency_key);
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.create_batch(text, jsonb, text, text, text, integer, text) is
  E'Submits a batch of structured requests sharing one response format. `responseFormat` is the JSON text of a json_schema envelope; `items` is [{line, content}] (content: text parts, as for createChat) or [{line, error}] for lines the client found invalid (they fail alone). The batch validates its schema before any item starts, then runs at most `concurrency` items at once, each as its own chat. A repeated `idempotencyKey` returns the first batch.';
select chat_private.grant_execute('chat_public.create_batch(text, jsonb, text, text, text, integer, text)', '{chat_anonymous, chat_user}');

create or replace function chat_private.operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb,
  p_name text default null, p_model_config_id text default null, p_workspace text default null,
  p_concurrency integer default 4, p_idempotency_key text default null) returns chat_public.batches as $$
begin
  if p_owner is null or not exists (select 1 from chat_public.users where id = p_owner) then
    raise exception 'owner must be an existing user' using errcode = 'CIINV', column = 'owner';
  end if;
  return chat_private.insert_batch(p_owner, chat_private.parse_response_format(p_response_format), p_items, p_name,
    p_model_config_id, p_workspace, p_concurrency, p_idempotency_key);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_create_batch(uuid, text, jsonb, text, text, text, integer, text) is
  E'Operator: submits a batch on behalf of a user (same rules as chat_public.create_batch; the schema is validated by the worker before any item starts).';
select chat_private.grant_execute('chat_private.operator_create_batch(uuid, text, jsonb, text, text, text, integer, text)', '{chat_operator}');

-- Starts pending items in line order until `concurrency` are running; completes the batch when nothing is left.
-- Each item is created in its own sub-block: an item whose creation fails (invalid content, a disabled model)
-- fails alone. Returns the number of items started.
-- Starts one pending item as its own chat in slot p_slot. 'running': its request is pending and the item holds the
-- slot; 'done': the item ended at once (a replayed creation whose request already finished, or a creation refused:
-- failed with invalid_input or dispatch_failed); 'slot_taken': another transaction's item holds the slot (the unique
-- index), and nothing of this attempt remains (the subtransaction, the chat included, is rolled back).
create or replace function chat_private.start_batch_item(p_batch chat_public.batches, p_line integer, p_content jsonb,
  p_slot integer) returns text as $$
declare
  v_result chat_public.chat_input_result;
  v_request chat_public.structured_output_requests;
begin
  begin
    v_result := chat_private.create_chat_as(p_batch.owner_id, p_content, p_batch.response_format,
      p_batch.model_config_id, left(coalesce(p_batch.name, 'batch') || ' #' || p_line, 200), p_batch.workspace,
      '[]', false, 'batch:' || p_batch.id || ':' || p_line, false);
    select * into v_request from chat_public.structured_output_requests where id = v_result.structured_output_request_id;
    -- The item's chat must answer the batch's schema: a chat found under the item's key that carries another
    -- schema (or none) was not created by this dispatcher, and the item fails instead of adopting it.
    if v_request.schema_sha256 is distinct from p_batch.schema_sha256 then
      raise exception 'the chat under this item''s idempotency key does not carry the batch''s schema';
    end if;
    -- A replayed creation (the idempotency key already existed) may find its request finished.
    update chat_public.batch_items set chat_id = v_result.chat_id, structured_output_request_id = v_request.id,
      started_at = now(),
      status = case when v_request.status = 'pending' then 'running' else v_request.status::text end::chat_public.batch_item_status,
      slot = case when v_request.status = 'pending' then p_slot end,
      error_code = v_request.error_code, error_message = v_request.error_message,
      finished_at = case when v_request.status <> 'pending' then now() end
    where batch_id = p_batch.id and line = p_line;
    return case when v_request.status = 'pending' then 'running' else 'done' end;
  exception
    when unique_violation then
      return 'slot_taken';
    when others then
      update chat_public.batch_items set status = 'failed',
        error_code = case when sqlstate = 'CIINV' then 'invalid_input' else 'dispatch_failed' end,
        error_message = left(sqlerrm, 2000), started_at = now(), finished_at = now()
      where batch_id = p_batch.id and line = p_line;
      return 'done';
  end;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.start_batch_item(chat_public.batches, integer, jsonb, integer)', '{}');

-- Fills slot p_slot with the first pending item no other transaction is starting (skip locked). Returns whether an
-- item now runs in it. The caller holds the slot: it just freed it, or found it free under the batch lock.
create or replace function chat_private.fill_batch_slot(p_batch chat_public.batches, p_slot integer) returns boolean as $$
declare
  v_item record;
  v_outcome text;
begin
  loop
    select line, content into v_item from chat_public.batch_items
    where batch_id = p_batch.id and status = 'pending' order by line limit 1 for update skip locked;
    if not found then
      return false;
    end if;
    v_outcome := chat_private.start_batch_item(p_batch, v_item.line, v_item.content, p_slot);
    if v_outcome = 'running' then
      return true;
    elsif v_outcome = 'slot_taken' then
      return false;
    end if;
  end loop;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.fill_batch_slot(chat_public.batches, integer)', '{}');

-- Completes a running or canceled batch once no item is pending or running. The batch lock is taken first, so two
-- transactions ending the last two items see each other's commit (each check is a fresh statement after the wait).
create or replace function chat_private.complete_batch_if_done(p_batch_id uuid) returns void as $$
declare
  v_batch chat_public.batches;
begin
  select * into v_batch from chat_public.batches where id = p_batch_id for update;
  if v_batch.status in ('running', 'canceled') and v_batch.finished_at is null
     and not exists (select 1 from chat_public.batch_items where batch_id = p_batch_id and status = 'pending')
     and not exists (select 1 from chat_public.batch_items where batch_id = p_batch_id and status = 'running') then
    update chat_public.batches set status = case when status = 'running' then 'completed' else status end,
      finished_at = now(), updated_at = now()
    where id = p_batch_id;
  end if;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.complete_batch_if_done(uuid)', '{}');

create or replace function chat_private.dispatch_batch(p_batch_id uuid) returns integer as $$
declare
  v_batch chat_public.batches;
  v_started integer := 0;
  v_slot integer;
begin
  select * into v_batch from chat_public.batches where id = p_batch_id for update;
  if not found then
    return 0;
  end if;
  if v_batch.status = 'running' then
    for v_slot in select s from generate_series(1, v_batch.concurrency) s
                  where not exists (select 1 from chat_public.batch_items i
                                    where i.batch_id = p_batch_id and i.status = 'running' and i.slot = s) loop
      exit when not chat_private.fill_batch_slot(v_batch, v_slot);
      v_started := v_started + 1;
    end loop;
  end if;
  perform chat_private.complete_batch_if_done(p_batch_id);
  perform chat_private.notify_batch(p_batch_id, 'progress');
  return v_started;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.dispatch_batch(uuid) is
  E'Starts pending items of a running batch in line order into its free slots (up to its concurrency), and completes the batch when no item is pending or running. Called when validation passes, by the worker''s sweep and by operators; safe to call at any time.';
select chat_private.grant_execute('chat_private.dispatch_batch(uuid)', '{chat_operator, chat_worker}');

-- The worker's verdict on the stored schema (src/structured): null starts the batch, an error fails it before
-- any item starts. Idempotent: a batch that left `validating` is returned unchanged.
create or replace function chat_private.finish_batch_validation(p_batch_id uuid, p_error text)
returns chat_public.batch_status as $$
declare
  v_batch chat_public.batches;
begin
  select * into v_batch from chat_public.batches where id = p_batch_id for update;
  if not found then
    raise exception 'batch not found' using errcode = 'BTNTF', column = 'batch_id';
  end if;
  if v_batch.status <> 'validating' then
    return v_batch.status;
  end if;
  if p_error is not null then
    update chat_public.batch_items set status = 'canceled', error_code = 'batch_failed',
      error_message = 'the batch failed before this item started', finished_at = now()
    where batch_id = p_batch_id and status = 'pending';
    update chat_public.batches set status = 'failed', error = left(p_error, 2000), finished_at = now(), updated_at = now()
    where id = p_batch_id;
    perform chat_private.notify_batch(p_batch_id, 'failed');
    return 'failed';
  end if;
  update chat_public.batches set status = 'running', started_at = now(), updated_at = now() where id = p_batch_id;
  perform chat_private.dispatch_batch(p_batch_id);
  return (select status from chat_public.batches where id = p_batch_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.finish_batch_validation(uuid, text)', '{chat_worker}');

-- The request's receipt ends its item and hands its slot to the next pending item, in the receipt's transaction and
-- without the batch lock (the slot's unique index keeps the concurrency), so finishing items of one batch do not
-- wait for each other. Only an item that starts no successor takes the batch lock, to see whether the batch is done.
create or replace function chat_private.tg_structured_output_requests__finish_batch_item() returns trigger as $$
declare
  v_batch chat_public.batches;
  v_batch_id uuid;
  v_slot integer;
begin
  update chat_public.batch_items set status = NEW.status::text::chat_public.batch_item_status,
    error_code = NEW.error_code, error_message = NEW.error_message, finished_at = coalesce(NEW.finished_at, now())
  where structured_output_request_id = NEW.id and status = 'running'
  returning batch_id, slot into v_batch_id, v_slot;
  if v_batch_id is null then
    return null;
  end if;
  if v_slot is null then
    -- An item started before slots existed: fill whatever is free under the batch lock instead.
    perform chat_private.dispatch_batch(v_batch_id);
    return null;
  end if;
  select * into v_batch from chat_public.batches where id = v_batch_id;
  if v_batch.status <> 'running' or v_slot > v_batch.concurrency
     or not chat_private.fill_batch_slot(v_batch, v_slot) then
    perform chat_private.complete_batch_if_done(v_batch_id);
  end if;
  perform chat_private.notify_batch(v_batch_id, 'progress');
  return null;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.tg_structured_output_requests__finish_batch_item()', '{}');

-- Cancel: pending items never start; running items are interrupted by the `batch_cancel` job, each in its own chat
-- transaction (this function holds the batch lock and so must not lock chats), and their receipts end them.
create or replace function chat_private.cancel_batch_as(p_batch_id uuid, p_owner uuid, p_reason text)
returns chat_public.batches as $$
declare
  v_batch chat_public.batches;
  v_running boolean;
begin
  select * into v_batch from chat_public.batches where id = p_batch_id for update;
  if not found or (p_owner is not null and v_batch.owner_id <> p_owner) then
    raise exception 'batch not found' using errcode = 'BTNTF', column = 'batch_id';
  end if;
  if v_batch.status = 'canceled' then
    return v_batch;
  end if;
  if v_batch.status in ('completed', 'failed') then
    raise exception 'the batch has already finished (%)', v_batch.status using errcode = 'BTDON', detail = v_batch.status;
  end if;
  update chat_public.batch_items set status = 'canceled', error_code = 'batch_canceled', error_message = left(p_reason, 2000),
    finished_at = now()
  where batch_id = p_batch_id and status = 'pending';
  v_running := exists (select 1 from chat_public.batch_items where batch_id = p_batch_id and status = 'running');
  update chat_public.batches set status = 'canceled', error = left(p_reason, 2000), updated_at = now(),
    finished_at = case when v_running then null else now() end
  where id = p_batch_id returning * into v_batch;
  if v_running then
    perform chat_private.add_job('batch_cancel', json_build_object('batch_id', p_batch_id),
      p_job_key => 'batch-cancel:' || p_batch_id, p_max_attempts => 5);
  end if;
  perform chat_private.notify_batch(p_batch_id, 'canceled');
  return v_batch;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.cancel_batch_as(uuid, uuid, text)', '{}');

create or replace function chat_public.cancel_batch(batch_id uuid) returns chat_public.batches as $$
  select * from chat_private.cancel_batch_as(cancel_batch.batch_id, chat_private.require_user(), 'canceled by its owner');
$$ language sql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.cancel_batch(uuid) is
  E'Cancels a batch: pending items never start; running items are interrupted and end with `operator_canceled` receipts. Canceling a canceled batch returns it; a finished one is refused.';
select chat_private.grant_execute('chat_public.cancel_batch(uuid)', '{chat_anonymous, chat_user}');

create or replace function chat_private.operator_cancel_batch(p_batch_id uuid, p_reason text) returns chat_public.batches as $$
begin
  if p_reason is null or length(btrim(p_reason)) = 0 or length(p_reason) > 500 then
    raise exception 'a reason of 1 to 500 characters is required' using errcode = 'CIINV', column = 'reason';
  end if;
  return chat_private.cancel_batch_as(p_batch_id, null, p_reason);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.operator_cancel_batch(uuid, text) is
  E'Operator repair: cancels any user''s batch with a reason (pending items canceled, running ones interrupted).';
select chat_private.grant_execute('chat_private.operator_cancel_batch(uuid, text)', '{chat_operator}');

-- Recovery for batch jobs a crashed worker left locked (Graphile Worker keeps them for 4 hours): validation and
-- cancellation are re-enqueued once the batch has stayed in that state for p_stale (a job_key on a locked job
-- makes a fresh job; both jobs are idempotent). A running batch with free slots and pending items is dispatched.
create or replace function chat_private.sweep_batches(p_stale interval default '30 seconds') returns integer as $$
declare
  v_batch record;
  v_count integer := 0;
begin
  for v_batch in
    select b.id, b.status from chat_public.batches b
    where b.status in ('validating', 'canceled', 'running') and b.finished_at is null and b.updated_at <= now() - p_stale
    for update of b skip locked
  loop
    if v_batch.status = 'validating' then
      perform chat_private.add_job('batch_validate', json_build_object('batch_id', v_batch.id),
        p_job_key => 'batch-validate:' || v_batch.id, p_max_attempts => 5);
    elsif v_batch.status = 'canceled' then
      perform chat_private.add_job('batch_cancel', json_build_object('batch_id', v_batch.id),
        p_job_key => 'batch-cancel:' || v_batch.id, p_max_attempts => 5);
    elsif (select count(*) from chat_public.batch_items i where i.batch_id = v_batch.id and i.status = 'running')
          >= (select concurrency from chat_public.batches where id = v_batch.id)
       or not exists (select 1 from chat_public.batch_items i where i.batch_id = v_batch.id and i.status = 'pending') then
      continue;
    else
      perform chat_private.dispatch_batch(v_batch.id);
    end if;
    update chat_public.batches set updated_at = now() where id = v_batch.id;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.sweep_batches(interval)', '{chat_worker}');

create or replace function chat_public.batches_item_counts(b chat_public.batches) returns chat_public.batch_item_counts as $$
  select count(*) filter (where status = 'pending')::integer, count(*) filter (where status = 'running')::integer,
         count(*) filter (where status = 'succeeded')::integer, count(*) filter (where status = 'failed')::integer,
         count(*) filter (where status = 'canceled')::integer
  from chat_public.batch_items where batch_id = b.id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.batches_item_counts(chat_public.batches) is
  E'The batch''s items by status (computed on read, never a stored counter).';
select chat_private.grant_execute('chat_public.batches_item_counts(chat_public.batches)', '{chat_anonymous, chat_user, chat_operator, chat_worker}');

create or replace view chat_private.batch_progress with (security_invoker = true) as
  select b.id as batch_id, b.owner_id, b.name, b.status, b.concurrency, b.total_items,
         c.pending, c.running, c.succeeded, c.failed, c.canceled, c.finished_items,
         b.created_at, b.started_at, b.finished_at,
         round(c.ran::numeric / nullif(extract(epoch from coalesce(b.finished_at, now()) - b.started_at), 0)::numeric, 2)
           as items_per_second,
         case when c.ran > 0 and b.finished_at is null and b.status = 'running' then
           make_interval(secs => (c.pending + c.running) * extract(epoch from now() - b.started_at) / c.ran) end as eta,
         b.error
  from chat_public.batches b
  cross join lateral (
    select count(*) filter (where i.status = 'pending') as pending, count(*) filter (where i.status = 'running') as running,
           count(*) filter (where i.status = 'succeeded') as succeeded, count(*) filter (where i.status = 'failed') as failed,
           count(*) filter (where i.status = 'canceled') as canceled,
           count(*) filter (where i.status not in ('pending', 'running')) as finished_items,
           count(*) filter (where i.status not in ('pending', 'running') and i.started_at is not null) as ran
    from chat_public.batch_items i where i.batch_id = b.id) c;
comment on view chat_private.batch_progress is
  E'Every batch with its items by status, throughput since it started (items that ran per second) and an ETA for running batches. Order by created_at desc; filter on status for the active ones.';

grant select on chat_private.batch_progress to chat_operator;


comment on table chat_public.batches is
  E'@behavior -insert -update -delete\nA batch run: many structured requests with one response format, each line becoming its own chat. `status`: validating (the schema is checked before any item starts), running, completed, failed (with `error`), canceled. Item counts are computed (`itemCounts`).';
comment on column chat_public.batches.response_format is E'The json_schema envelope {name, description?, schema} every item uses.';
comment on column chat_public.batches.concurrency is E'At most this many items run at once.';
comment on table chat_public.batch_items is
  E'@behavior -insert -update -delete\nOne line of a batch: its input, the chat and structured request it became, and its status. `errorCode` is the request''s failure or cancellation code, or invalid_line, invalid_input, dispatch_failed, batch_failed, batch_canceled.';
comment on column chat_public.batch_items.line is E'The line number in the submitted input (1-based).';
