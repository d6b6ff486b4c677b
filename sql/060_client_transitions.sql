-- Client transitions: the only way clients change anything. Each runs as security definer, identifies the caller
-- from the JWT claim, locks the chat once (_begin_transition) and notifies once. Exposed as GraphQL mutations.

create or replace function chat_private.check_dynamic_tools(p_tools jsonb) returns void as $$
declare
  v_tool jsonb;
  v_index integer := 0;
begin
  if p_tools is null or jsonb_typeof(p_tools) <> 'array' then
    raise exception 'dynamic_tools must be an array' using errcode = 'CIINV', column = 'dynamic_tools';
  end if;
  if jsonb_array_length(p_tools) > 64 or octet_length(p_tools::text) > 262144 then
    raise exception 'dynamic_tools allows at most 64 tools and 256 KiB' using errcode = 'CIINV', column = 'dynamic_tools';
  end if;
  -- Most chats declare no tools: the per-tool loop and the uniqueness count have nothing to look at.
  if jsonb_array_length(p_tools) = 0 then
    return;
  end if;
  for v_tool in select e from jsonb_array_elements(p_tools) e loop
    if jsonb_typeof(v_tool) <> 'object' or jsonb_typeof(v_tool -> 'name') is distinct from 'string'
       or (v_tool ->> 'name') !~ '^[A-Za-z0-9_-]{1,64}$' then
      raise exception 'dynamic_tools[%].name must match ^[A-Za-z0-9_-]{1,64}$', v_index
        using errcode = 'CIINV', column = format('dynamic_tools[%s].name', v_index);
    end if;
    -- The structured-output finalizer's name, in every chat: a plain chat may take a structured request later, and
    -- a client tool of that name would never be offered (the finalizer is) nor answered.
    if v_tool ->> 'name' = 'coder_structured_output' then
      raise exception 'dynamic_tools[%].name coder_structured_output is reserved for the structured output finalizer', v_index
        using errcode = 'RFTNM', column = 'dynamic_tools';
    end if;
    if v_tool -> 'description' is not null and jsonb_typeof(v_tool -> 'description') <> 'string' then
      raise exception 'dynamic_tools[%].description must be a string', v_index
        using errcode = 'CIINV', column = format('dynamic_tools[%s].description', v_index);
    end if;
    if jsonb_typeof(v_tool -> 'input_schema') is distinct from 'object' then
      raise exception 'dynamic_tools[%].input_schema must be a JSON Schema object', v_index
        using errcode = 'CIINV', column = format('dynamic_tools[%s].input_schema', v_index);
    end if;
    -- plan_safe: the client declares the tool free of side effects, so plan mode keeps offering it.
    if v_tool -> 'plan_safe' is not null and jsonb_typeof(v_tool -> 'plan_safe') <> 'boolean' then
      raise exception 'dynamic_tools[%].plan_safe must be a boolean', v_index
        using errcode = 'CIINV', column = format('dynamic_tools[%s].plan_safe', v_index);
    end if;
    if exists (select 1 from jsonb_object_keys(v_tool) k where k not in ('name', 'description', 'input_schema', 'plan_safe')) then
      raise exception 'dynamic_tools[%] has unknown fields', v_index
        using errcode = 'CIINV', column = format('dynamic_tools[%s]', v_index);
    end if;
    v_index := v_index + 1;
  end loop;
  if (select count(distinct e ->> 'name') from jsonb_array_elements(p_tools) e) <> jsonb_array_length(p_tools) then
    raise exception 'dynamic_tools names must be unique' using errcode = 'CIINV', column = 'dynamic_tools';
  end if;
end;
$$ language plpgsql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.check_dynamic_tools(jsonb)', '{}');

-- A workspace is a folder name under the deployment's workspace root, never a path (chats and batches alike).
-- Not security definer and naming nothing through search_path (its operator is qualified): no SET clause, which
-- would save and restore a setting at every chat created.
create or replace function chat_private.check_workspace(p_workspace text) returns void as $$
begin
  if p_workspace is not null
     and p_workspace operator(pg_catalog.!~) '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$' then
    raise exception 'workspace must be a folder name (letters, digits, _ . -)' using errcode = 'CIINV', column = 'workspace';
  end if;
end;
$$ language plpgsql immutable;
select chat_private.grant_execute('chat_private.check_workspace(text)', '{}');

-- Creates a chat for p_owner with an already parsed json_schema envelope (or null). Shared by the client
-- transition and by batch dispatch, which creates chats for a batch's owner inside the worker's transaction.
create or replace function chat_private.create_chat_as(
  p_owner uuid, p_content jsonb, p_format jsonb, p_model_config_id text, p_title text, p_workspace text,
  p_dynamic_tools jsonb, p_plan_mode boolean, p_idempotency_key text, p_check_experiment boolean default true
) returns chat_public.chat_input_result as $$
declare
  v_previous jsonb;
  v_model text;
  v_chat_id uuid;
  v_request uuid;
  v_message bigint;
  v_result chat_public.chat_input_result;
  v_request_sha256 text;
  v_chat chat_public.chats;
begin
  -- Without a key there is nothing to look up, lock or remember: both idempotency helpers return at once for null.
  if p_idempotency_key is not null then
    v_request_sha256 := chat_private.request_sha256(pg_catalog.jsonb_build_array(p_content, p_format,
      p_model_config_id, p_title, p_workspace, coalesce(p_dynamic_tools, '[]'), coalesce(p_plan_mode, false)));
    v_previous := chat_private.idempotent_result(p_owner, p_idempotency_key, 'create_chat', v_request_sha256);
    if v_previous is not null then
      return jsonb_populate_record(null::chat_public.chat_input_result, v_previous);
    end if;
  end if;
  perform chat_private.check_input_content(p_content);
  perform chat_private.check_dynamic_tools(coalesce(p_dynamic_tools, '[]'));
  if p_title is not null and length(p_title) > 200 then
    raise exception 'title has more than 200 characters' using errcode = 'CIINV', column = 'title';
  end if;
  perform chat_private.check_workspace(p_workspace);
  select id into v_model from chat_private.model_configs m
  where m.enabled and (m.id = p_model_config_id or (p_model_config_id is null and m.is_default));
  if v_model is null then
    raise exception 'unknown model config' using errcode = 'CIINV', column = 'model_config_id';
  end if;
  -- The chat is born at snapshot 1 (its creation is its first transition) with its history fence current there:
  -- both are the columns' defaults (migration 0063), so its first history row (the input below) finds the fence
  -- current and no second row version is written for it. It is born running, so none is written for its status
  -- either: it is enqueued once, by the turn_progress insert of its first turn below (a chat inserted with its
  -- history is not enqueued by its own insert; see the _900_enqueue_run triggers in 020_triggers.sql). So the row
  -- inserted here is the chat as this transition leaves it, and it serves the notification below.
  insert into chat_public.chats (owner_id, title, model_config_id, status, plan_mode, workspace, dynamic_tools)
  values (p_owner, p_title, v_model, 'running', coalesce(p_plan_mode, false), p_workspace,
          coalesce(p_dynamic_tools, '[]'))
  returning * into v_chat;
  v_chat_id := v_chat.id;
  if p_format is not null then
    v_request := chat_private._accept_structured_request(v_chat_id, p_format, p_check_experiment);
  end if;
  v_message := chat_private._insert_input(v_chat_id, p_content, v_request, p_owner);
  -- The turn_progress insert's trigger enqueues the chat (it is running).
  perform chat_private._start_turn(v_chat_id, v_message, v_request);
  v_result := (v_chat_id, v_message, null, v_request, '{}')::chat_public.chat_input_result;
  if p_idempotency_key is not null then
    perform chat_private.remember_result(p_owner, p_idempotency_key, 'create_chat', to_jsonb(v_result), v_request_sha256);
  end if;
  -- notify_chat_row: a new chat is running, so only its own channel applies (see notify_chat).
  perform chat_private.notify_chat_row(v_chat, 'created');
  return v_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.create_chat_as(uuid, jsonb, jsonb, text, text, text, jsonb, boolean, text, boolean)', '{}');

create or replace function chat_public.create_chat(
  content jsonb,
  response_format text default null,
  model_config_id text default null,
  title text default null,
  workspace text default null,
  dynamic_tools jsonb default '[]',
  plan_mode boolean default false,
  idempotency_key text default null
) returns chat_public.chat_input_result as $$
-- PL/pgSQL: PostgreSQL plans a security definer SQL function's body in every transaction, PL/pgSQL once a session.
-- The caller is identified before response_format is parsed (NOAUT before RFINV).
declare
  v_user uuid := chat_private.require_user();
begin
  perform chat_private.check_client_key(idempotency_key);
  return chat_private.create_chat_as(v_user, content, chat_private.parse_response_format(response_format),
    model_config_id, title, workspace, dynamic_tools, plan_mode, idempotency_key);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_public.create_chat(jsonb, text, text, text, text, jsonb, boolean, text) is
  E'Creates a chat whose first message starts a turn. `response_format` is the JSON text of {"type":"json_schema","json_schema":{"name","description","schema"}} (or {"type":"text"}); a structured request gets a server-minted id. A repeated `idempotency_key` returns the first result.';
select chat_private.grant_execute('chat_public.create_chat(jsonb, text, text, text, text, jsonb, boolean, text)', '{chat_anonymous, chat_user}');

create or replace function chat_public.send_chat_message(
  chat_id uuid,
  content jsonb,
  response_format text default null,
  busy_behavior text default 'queue',
  idempotency_key text default null
) returns chat_public.chat_input_result as $$
declare
  v_user uuid := chat_private.require_user();
  v_previous jsonb;
  v_format jsonb;
  v_chat chat_public.chats;
  v_state text;
  v_request uuid;
  v_message bigint;
  v_queued bigint;
  v_interrupt boolean;
  v_result chat_public.chat_input_result;
  v_request_sha256 text;
begin
  perform chat_private.check_client_key(idempotency_key);
  -- The format is parsed before the replay lookup: the parsed envelope is part of what identifies the request.
  v_format := chat_private.parse_response_format(response_format);
  if idempotency_key is not null then
    v_request_sha256 := chat_private.request_sha256(pg_catalog.jsonb_build_array(send_chat_message.chat_id, content,
      v_format, coalesce(busy_behavior, 'queue')));
  end if;
  v_previous := chat_private.idempotent_result(v_user, idempotency_key, 'send_chat_message', v_request_sha256);
  if v_previous is not null then
    return jsonb_populate_record(null::chat_public.chat_input_result, v_previous);
  end if;
  perform chat_private.check_input_content(content);
  if coalesce(busy_behavior, 'queue') not in ('queue', 'interrupt') then
    raise exception 'busy_behavior must be queue or interrupt' using errcode = 'CIINV', column = 'busy_behavior';
  end if;
  v_interrupt := busy_behavior = 'interrupt';
  v_chat := chat_private._begin_transition(send_chat_message.chat_id, 'send_message', v_user);
  v_state := chat_private.chat_state(v_chat);
  if v_format is not null then
    v_request := chat_private._accept_structured_request(v_chat.id, v_format);
  end if;
  if v_state = 'waiting' and not exists (select 1 from chat_public.chat_queued_messages q where q.chat_id = v_chat.id) then
    v_message := chat_private._insert_input(v_chat.id, content, v_request, v_user);
    perform chat_private._start_turn(v_chat.id, v_message, v_request);
    update chat_public.chats set status = chat_private._to_state('send_message', v_state) where id = v_chat.id;
  elsif v_state in ('waiting', 'error') then
    -- Older queued inputs keep their place: this one joins the queue and the head starts the next turn.
    v_queued := chat_private._queue_message(v_chat.id, content, v_request, v_user, false);
    v_message := chat_private._promote_queue_head(v_chat.id);
    if exists (select 1 from chat_public.chat_queued_messages q where q.id = v_queued) then
      v_message := null;
    else
      v_queued := null;
    end if;
    update chat_public.chats set status = chat_private._to_state('send_message', v_state), last_error = null
    where id = v_chat.id;
  else
    v_queued := chat_private._queue_message(v_chat.id, content, v_request, v_user, v_interrupt);
    if v_interrupt and v_state = 'running' then
      update chat_public.chats set status = chat_private._to_state('send_message', v_state, 'interrupting')
      where id = v_chat.id;
    elsif v_interrupt and v_state = 'requires_action' then
      perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: the user sent a new message',
        chat_private._to_state('send_message', v_state, 'running'));
    end if;
  end if;
  v_result := (v_chat.id, v_message, v_queued, v_request, '{}')::chat_public.chat_input_result;
  perform chat_private.remember_result(v_user, idempotency_key, 'send_chat_message', to_jsonb(v_result), v_request_sha256);
  perform chat_private.notify_chat(v_chat.id, 'message_sent');
  return v_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_public.send_chat_message(uuid, jsonb, text, text, text) is
  E'Sends a message. An idle chat starts a turn at once; a busy one queues it (`busy_behavior` "queue") or queues it at the head and interrupts the running turn ("interrupt"). Returns the message or the queued message, with the structured request id when `response_format` asks for one.';
select chat_private.grant_execute('chat_public.send_chat_message(uuid, jsonb, text, text, text)', '{chat_anonymous, chat_user}');

create or replace function chat_public.edit_chat_message(
  message_id bigint,
  content jsonb,
  response_format text default null,
  preserve_schema_sha256 text default null,
  preserve_history_version bigint default null
) returns chat_public.chat_input_result as $$
declare
  v_user uuid := chat_private.require_user();
  v_message chat_public.chat_messages;
  v_chat chat_public.chats;
  v_old_request chat_public.structured_output_requests;
  v_format jsonb;
  v_request uuid;
  v_new_message bigint;
  v_receipts bigint[] := '{}';
  v_superseded uuid[];
  v_pending uuid;
  v_receipt bigint;
begin
  perform chat_private.check_input_content(content);
  select m.* into v_message from chat_public.chat_messages m join chat_public.chats c on c.id = m.chat_id
  where m.id = edit_chat_message.message_id and c.owner_id = v_user
    and m.role = 'user' and m.kind = 'message' and not m.deleted;
  if not found then
    raise exception 'message not found or not editable' using errcode = 'MSNTF', column = 'message_id';
  end if;
  if response_format is null then
    select * into v_old_request from chat_public.structured_output_requests r where r.id = v_message.structured_output_request_id;
  else
    v_format := chat_private.parse_response_format(response_format);
  end if;
  v_chat := chat_private._begin_transition(v_message.chat_id, 'edit_message', v_user);
  -- The message was read before the chat lock: a concurrent edit may have discarded it while this call waited.
  if not exists (select 1 from chat_public.chat_messages m where m.id = v_message.id and not m.deleted) then
    raise exception 'message not found or not editable' using errcode = 'MSNTF', column = 'message_id';
  end if;
  if v_old_request.id is not null then
    -- Preserve: the API validated the stored format before calling; both facts it read are rechecked under the lock.
    if (preserve_schema_sha256 is not null and preserve_schema_sha256 <> v_old_request.schema_sha256)
       or (preserve_history_version is not null and preserve_history_version <> v_chat.history_version) then
      raise exception 'the preserved response_format changed since it was validated; retry the edit'
        using errcode = 'RFSTL', column = 'response_format';
    end if;
    v_format := jsonb_strip_nulls(jsonb_build_object('name', v_old_request.name, 'description', v_old_request.description,
                                                     'schema', v_old_request.schema));
  end if;
  if v_format is not null then
    v_request := chat_private._accept_structured_request(v_chat.id, v_format);
  end if;
  -- Edit ordering: collect the pending requests of the suffix and the queue, discard both, end them, then insert
  -- the replacement, so that no live request ever loses its history. An array, not a temporary table: a security
  -- definer function must not name objects a caller can create first (a planted pg_temp table with a trigger would
  -- run as this function's owner).
  v_superseded := array(
    select s.request_id from (
      select m.structured_output_request_id as request_id, 0 as source, m.id as ord from chat_public.chat_messages m
      join chat_public.structured_output_requests r on r.id = m.structured_output_request_id
      where m.chat_id = v_chat.id and m.id >= v_message.id and not m.deleted and m.kind = 'message' and r.status = 'pending'
      union all
      select q.structured_output_request_id, 1, q.position from chat_public.chat_queued_messages q
      join chat_public.structured_output_requests r on r.id = q.structured_output_request_id
      where q.chat_id = v_chat.id and r.status = 'pending'
    ) s order by s.source, s.ord);
  update chat_public.chat_messages m set deleted = true where m.chat_id = v_chat.id and m.id >= v_message.id and not m.deleted;
  delete from chat_public.chat_queued_messages q where q.chat_id = v_chat.id;
  perform chat_private._close_turn(v_chat.id);
  -- Status with the deadline in one UPDATE (the chats CHECK ties requires_action to a deadline).
  update chat_public.chats c set status = chat_private._to_state('edit_message', chat_private.chat_state(c)),
    pending_tool_calls = '[]', requires_action_deadline_at = null, last_error = null, retry_state = null
  where c.id = v_chat.id;
  foreach v_pending in array v_superseded loop
    v_receipt := chat_private._write_receipt(v_pending, 'canceled', 'superseded');
    if v_receipt is not null then
      v_receipts := v_receipts || v_receipt;
    end if;
  end loop;
  v_new_message := chat_private._insert_input(v_chat.id, content, v_request, v_user);
  perform chat_private._start_turn(v_chat.id, v_new_message, v_request);
  perform chat_private.notify_chat(v_chat.id, 'history_reset');
  return (v_chat.id, v_new_message, null, v_request, v_receipts)::chat_public.chat_input_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.edit_chat_message(bigint, jsonb, text, text, bigint) is
  E'Replaces a user message: later history and the queue are discarded, pending structured requests among them get `superseded` receipts (listed in id order), and the replacement starts a turn. `response_format` omitted or null keeps the edited message''s format under a fresh request id, {"type":"text"} clears it, a json_schema replaces it.';
select chat_private.grant_execute('chat_public.edit_chat_message(bigint, jsonb, text, text, bigint)', '{chat_anonymous, chat_user}');

create or replace function chat_public.delete_queued_message(queued_message_id bigint)
returns chat_public.chat_input_result as $$
declare
  v_user uuid := chat_private.require_user();
  v_queued chat_public.chat_queued_messages;
  v_receipt bigint;
begin
  select q.* into v_queued from chat_public.chat_queued_messages q join chat_public.chats c on c.id = q.chat_id
  where q.id = delete_queued_message.queued_message_id and c.owner_id = v_user;
  if not found then
    raise exception 'queued message not found' using errcode = 'QMNTF', column = 'queued_message_id';
  end if;
  perform chat_private._begin_transition(v_queued.chat_id, 'delete_queued_message', v_user);
  -- Re-read under the chat lock: the row may have been promoted (its request now runs) or deleted while this call
  -- waited, and a promoted request must not be cancelled as queue_deleted.
  delete from chat_public.chat_queued_messages where id = v_queued.id returning * into v_queued;
  if not found then
    raise exception 'queued message not found' using errcode = 'QMNTF', column = 'queued_message_id';
  end if;
  if v_queued.structured_output_request_id is not null then
    v_receipt := chat_private._write_receipt(v_queued.structured_output_request_id, 'canceled', 'queue_deleted');
  end if;
  perform chat_private.notify_chat(v_queued.chat_id, 'queue');
  return (v_queued.chat_id, null, v_queued.id, v_queued.structured_output_request_id,
          array_remove(array[v_receipt], null))::chat_public.chat_input_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.delete_queued_message(bigint) is
  E'Removes a queued message. A queued structured request ends at once with a `queue_deleted` receipt; a running turn is not disturbed.';
select chat_private.grant_execute('chat_public.delete_queued_message(bigint)', '{chat_anonymous, chat_user}');

create or replace function chat_public.promote_queued_message(queued_message_id bigint)
returns chat_public.chat_input_result as $$
declare
  v_user uuid := chat_private.require_user();
  v_queued chat_public.chat_queued_messages;
  v_chat chat_public.chats;
  v_state text;
  v_message bigint;
begin
  select q.* into v_queued from chat_public.chat_queued_messages q join chat_public.chats c on c.id = q.chat_id
  where q.id = promote_queued_message.queued_message_id and c.owner_id = v_user;
  if not found then
    raise exception 'queued message not found' using errcode = 'QMNTF', column = 'queued_message_id';
  end if;
  v_chat := chat_private._begin_transition(v_queued.chat_id, 'promote_queued_message', v_user);
  -- Re-read under the chat lock: a row promoted or deleted while this call waited must not interrupt the turn.
  if not exists (select 1 from chat_public.chat_queued_messages q where q.id = v_queued.id) then
    raise exception 'queued message not found' using errcode = 'QMNTF', column = 'queued_message_id';
  end if;
  v_state := chat_private.chat_state(v_chat);
  update chat_public.chat_queued_messages set position = -nextval('chat_public.chat_queued_messages_position')
  where id = v_queued.id;
  if v_state in ('waiting', 'error') then
    v_message := chat_private._promote_queue_head(v_chat.id);
    update chat_public.chats set status = chat_private._to_state('promote_queued_message', v_state), last_error = null
    where id = v_chat.id;
  elsif v_state = 'running' then
    update chat_public.chats set status = chat_private._to_state('promote_queued_message', v_state)
    where id = v_chat.id;
  elsif v_state = 'requires_action' then
    perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: the user promoted a queued message',
      chat_private._to_state('promote_queued_message', v_state));
  end if;
  perform chat_private.notify_chat(v_chat.id, 'queue');
  return (v_chat.id, v_message, case when v_message is null then v_queued.id end,
          v_queued.structured_output_request_id, '{}')::chat_public.chat_input_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.promote_queued_message(bigint) is
  E'Runs a queued message next: an idle chat starts it at once; a running turn is interrupted and the message moves to the head of the queue.';
select chat_private.grant_execute('chat_public.promote_queued_message(bigint)', '{chat_anonymous, chat_user}');

create or replace function chat_public.interrupt_chat(chat_id uuid) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
  v_chat chat_public.chats;
  v_child uuid;
begin
  v_chat := chat_private._begin_transition(interrupt_chat.chat_id, 'interrupt', v_user);
  if v_chat.status = 'running' then
    update chat_public.chats set status = chat_private._to_state('interrupt', 'running') where id = v_chat.id;
  elsif v_chat.status = 'requires_action' then
    perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: the user interrupted',
      chat_private._to_state('interrupt', 'requires_action'));
  end if;
  perform chat_private.notify_chat(v_chat.id, 'status');
  -- Subagents stop with their parent, whatever the parent is doing: a child left running would go on spending with
  -- nobody waiting for it. Each running child is interrupted exactly as interrupt_agent would (its queued follow-ups
  -- still run afterwards, as after any interrupt). Children have no children (depth 1), so this goes no deeper. The
  -- locking read re-checks the status of a child that changed while we waited for it, so a child that has stopped
  -- running meanwhile (and may since be archived, CHARC) is left alone.
  for v_child in select c.id from chat_public.chats c where c.parent_chat_id = v_chat.id and c.status = 'running'
                 order by c.id for no key update loop
    perform chat_public.interrupt_chat(v_child);
  end loop;
  return (select c from chat_public.chats c where c.id = v_chat.id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.interrupt_chat(uuid) is
  E'Stops the running step (the turn ends; a structured request gets an `interrupted` receipt). While the chat waits for client tool results, the pending calls are cancelled instead and the turn continues. The running turns of the chat''s subagents are interrupted too.';
select chat_private.grant_execute('chat_public.interrupt_chat(uuid)', '{chat_anonymous, chat_user}');

create or replace function chat_public.submit_tool_results(chat_id uuid, results jsonb) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
  v_chat chat_public.chats;
  v_expected text[];
  v_given text[];
begin
  if results is null or jsonb_typeof(results) <> 'array' or octet_length(results::text) > 1048576 then
    raise exception 'results must be an array of at most 1 MiB' using errcode = 'CIINV', column = 'results';
  end if;
  if exists (select 1 from jsonb_array_elements(results) r
             where jsonb_typeof(r) <> 'object' or jsonb_typeof(r -> 'tool_call_id') is distinct from 'string'
               or r -> 'result' is null
               or (r -> 'is_error' is not null and jsonb_typeof(r -> 'is_error') <> 'boolean')
               or exists (select 1 from jsonb_object_keys(r) k where k not in ('tool_call_id', 'result', 'is_error'))) then
    raise exception 'each result is {tool_call_id, result, is_error?}' using errcode = 'CIINV', column = 'results';
  end if;
  v_chat := chat_private._begin_transition(submit_tool_results.chat_id, 'submit_tool_results', v_user);
  select coalesce(array_agg(c ->> 'tool_call_id' order by c ->> 'tool_call_id'), '{}') into v_expected
  from jsonb_array_elements(v_chat.pending_tool_calls) c;
  select coalesce(array_agg(r ->> 'tool_call_id' order by r ->> 'tool_call_id'), '{}') into v_given
  from jsonb_array_elements(results) r;
  if v_given <> v_expected then
    raise exception 'results must answer exactly the pending tool calls' using errcode = 'TLRES', column = 'results';
  end if;
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, created_by)
  select v_chat.id, 'tool', 'both', 'message', jsonb_agg(jsonb_build_object(
    'type', 'tool-result', 'tool_call_id', r ->> 'tool_call_id', 'tool_name', c ->> 'tool_name',
    'result', r -> 'result', 'is_error', coalesce((r ->> 'is_error')::boolean, false)) order by c.ord), v_user
  from jsonb_array_elements(results) r
  join jsonb_array_elements(v_chat.pending_tool_calls) with ordinality c(c, ord) on c ->> 'tool_call_id' = r ->> 'tool_call_id';
  update chat_public.chats set status = chat_private._to_state('submit_tool_results', 'requires_action'),
    pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = v_chat.id;
  perform chat_private.notify_chat(v_chat.id, 'tool_results');
  return (select c from chat_public.chats c where c.id = v_chat.id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.submit_tool_results(uuid, jsonb) is
  E'Answers the client-executed tool calls the chat waits on. `results` is [{tool_call_id, result, is_error?}] and must cover exactly the pending calls.';
select chat_private.grant_execute('chat_public.submit_tool_results(uuid, jsonb)', '{chat_anonymous, chat_user}');

create or replace function chat_public.archive_chat(chat_id uuid, archived boolean default true) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform chat_private._begin_transition(archive_chat.chat_id,
    case when coalesce(archived, true) then 'archive' else 'unarchive' end, v_user);
  update chat_public.chats c set archived = coalesce(archive_chat.archived, true) where c.id = archive_chat.chat_id;
  perform chat_private.notify_chat(archive_chat.chat_id, 'status');
  return (select c from chat_public.chats c where c.id = archive_chat.chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.archive_chat(uuid, boolean) is
  E'Archives an idle chat (waiting or error), or unarchives it with `archived` false.';
select chat_private.grant_execute('chat_public.archive_chat(uuid, boolean)', '{chat_anonymous, chat_user}');

create or replace function chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform chat_private._begin_transition(set_chat_plan_mode.chat_id, 'set_plan_mode', v_user);
  if enabled and (chat_private._active_request(set_chat_plan_mode.chat_id) is not null or exists (
      select 1 from chat_public.chat_queued_messages q where q.chat_id = set_chat_plan_mode.chat_id
        and q.structured_output_request_id is not null)) then
    raise exception 'plan mode cannot start while a structured output request is active or queued'
      using errcode = 'SOACT', column = 'enabled';
  end if;
  update chat_public.chats c set plan_mode = coalesce(enabled, false) where c.id = set_chat_plan_mode.chat_id;
  perform chat_private.notify_chat(set_chat_plan_mode.chat_id, 'status');
  return (select c from chat_public.chats c where c.id = set_chat_plan_mode.chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.set_chat_plan_mode(uuid, boolean) is
  E'Switches plan mode. Refused while a structured output request is active or queued, so no obligation is silently dropped.';
select chat_private.grant_execute('chat_public.set_chat_plan_mode(uuid, boolean)', '{chat_anonymous, chat_user}');
