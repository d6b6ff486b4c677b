-- The OpenAI-compatible /v1 Responses (tables: migrations/0100 and 0160). A Response is a structured output request:
-- these functions create one with chatd's own transition (create_chat_as, as the calling user), continue its turn
-- after client tools (submit_tool_results), follow a finished one up in its chat (send_chat_message), read it with
-- its receipt, and cancel it. A request's first Response has
-- the request's id; each client tool round after it is a row of openai_response_rounds with an id of its own.

-- The Response or round that an Idempotency-Key already made for the caller (null: none). Another body under the
-- same key is refused (IDKEY), so a retried POST never creates a second request or answers a round twice.
create or replace function chat_private.openai_idempotent_response(p_user uuid, p_idempotency_key text,
  p_body_sha256 text) returns uuid as $$
declare
  v_id uuid;
  v_sha text;
begin
  if p_idempotency_key is null then
    return null;
  end if;
  select o.request_id, o.body_sha256 into v_id, v_sha from chat_private.openai_responses o
  where o.owner_id = p_user and o.idempotency_key = p_idempotency_key;
  if not found then
    select x.id, x.body_sha256 into v_id, v_sha from chat_private.openai_response_rounds x
    where x.owner_id = p_user and x.idempotency_key = p_idempotency_key;
  end if;
  if v_id is not null and v_sha <> p_body_sha256 then
    raise exception 'this Idempotency-Key was already used with another request body'
      using errcode = 'IDKEY', column = 'idempotency_key';
  end if;
  return v_id;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.openai_idempotent_response(uuid, text, text)', '{}');

-- Creates the Response: the chat and its request through create_chat_as, then the /v1 record, in one transaction.
-- p_tools are the function tools as the chat's dynamic (client) tools.
create or replace function chat_public.openai_create_response(p_content jsonb, p_response_format text,
  p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text,
  p_idempotency_key text) returns uuid as $$
declare
  v_user uuid := chat_private.require_user();
  v_previous uuid := chat_private.openai_idempotent_response(v_user, p_idempotency_key, p_body_sha256);
  v_result chat_public.chat_input_result;
begin
  if v_previous is not null then
    return v_previous;
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

-- A Response id as the caller names it: a request's own id is its first Response (round 0), a round's id is that
-- round; `superseded` is true once a later round of the request exists (the Response was continued). The one owner of
-- that mapping for continue, follow-up and cancel; ownership is checked by each caller on the request's chat.
create or replace function chat_private._openai_response_round(p_id uuid, p_user uuid,
  out request_id uuid, out round integer, out superseded boolean) as $$
  select coalesce(x.request_id, p_id), coalesce(x.round, 0),
    exists (select 1 from chat_private.openai_response_rounds y
            where y.request_id = coalesce(x.request_id, p_id) and y.round > coalesce(x.round, 0))
  from (select 1) one
  left join chat_private.openai_response_rounds x on x.id = p_id and x.owner_id = p_user;
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._openai_response_round(uuid, uuid)', '{}');

-- Continues the turn of p_previous, a Response that waits for client tool results: p_results answer its calls
-- (submit_tool_results checks they answer exactly the pending ones, TLRES) and a new round records the calls it
-- answered, in one transaction. The previous Response must be the newest of its request and its turn must wait for
-- these results; p_tools, when given, must be the tools the turn started with (a turn cannot change them).
create or replace function chat_public.openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb,
  p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) returns uuid as $$
declare
  v_user uuid := chat_private.require_user();
  v_id uuid := chat_private.openai_idempotent_response(v_user, p_idempotency_key, p_body_sha256);
  v_request uuid;
  v_round integer;
  v_superseded boolean;
  v_chat chat_public.chats;
begin
  if v_id is not null then
    return v_id;
  end if;
  select t.request_id, t.round, t.superseded into v_request, v_round, v_superseded
  from chat_private._openai_response_round(p_previous, v_user) t;
  -- Locked as submit_tool_results locks it, so the checks below hold when it runs.
  select c.* into v_chat from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.id = v_request and c.owner_id = v_user for update of c;
  if not found then
    raise exception 'the previous Response was not found' using errcode = 'CIINV', column = 'previous_response_id';
  end if;
  if v_superseded then
    raise exception 'the previous Response was already continued; continue the newest Response of the turn'
      using errcode = 'CIINV', column = 'previous_response_id';
  end if;
  if v_chat.status <> 'requires_action' or chat_private._active_request(v_chat.id) is distinct from v_request then
    raise exception 'the previous Response does not wait for function_call_output items'
      using errcode = 'CIINV', column = 'previous_response_id';
  end if;
  if jsonb_array_length(coalesce(p_tools, '[]')) > 0 and p_tools <> v_chat.dynamic_tools then
    raise exception 'tools must be the ones the turn started with (or be left out)' using errcode = 'CIINV', column = 'tools';
  end if;
  perform chat_public.submit_tool_results(v_chat.id, p_results);
  insert into chat_private.openai_response_rounds (request_id, owner_id, round, previous_id, answered_calls, background,
    echo, body_sha256, idempotency_key)
  values (v_request, v_user, v_round + 1, p_previous, v_chat.pending_tool_calls, p_background, p_echo, p_body_sha256,
          p_idempotency_key)
  returning id into v_id;
  return v_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_continue_response(uuid, jsonb, jsonb, boolean, jsonb, text, text) is
  E'@behavior -*\nAnswers the function calls of a Response with function_call_output items for /v1/responses (previous_response_id).';
select chat_private.grant_execute('chat_public.openai_continue_response(uuid, jsonb, jsonb, boolean, jsonb, text, text)', '{chat_user}');

-- A follow-up: new input for the chat of p_previous, which must be the newest Response of that chat and finished
-- (one that waits for client tools takes function_call_output items instead). The message goes in through
-- send_chat_message with its own format, so it is a new request with a /v1 record of its own, in one transaction. The
-- chat keeps its model config, workspace and tools: a follow-up that names others is refused.
create or replace function chat_public.openai_follow_up_response(p_previous uuid, p_content jsonb,
  p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb,
  p_body_sha256 text, p_idempotency_key text) returns uuid as $$
declare
  v_user uuid := chat_private.require_user();
  v_id uuid := chat_private.openai_idempotent_response(v_user, p_idempotency_key, p_body_sha256);
  v_request uuid;
  v_superseded boolean;
  v_previous chat_public.structured_output_requests;
  v_chat chat_public.chats;
  v_result chat_public.chat_input_result;
begin
  if v_id is not null then
    return v_id;
  end if;
  select t.request_id, t.superseded into v_request, v_superseded
  from chat_private._openai_response_round(p_previous, v_user) t;
  select r.* into v_previous from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.id = v_request and c.owner_id = v_user;
  if not found then
    raise exception 'the previous Response was not found' using errcode = 'CIINV', column = 'previous_response_id';
  end if;
  -- Locked as send_chat_message locks it, so no other input slips in between the check and the message.
  select c.* into v_chat from chat_public.chats c where c.id = v_previous.chat_id for update;
  if v_previous.status = 'pending'
     or v_superseded
     or exists (select 1 from chat_public.structured_output_requests r
                where r.chat_id = v_chat.id and r.id <> v_request and r.created_at >= v_previous.created_at) then
    raise exception 'previous_response_id must name the newest Response of its chat, finished (one that waits for client tools takes function_call_output items)'
      using errcode = 'CIINV', column = 'previous_response_id';
  end if;
  if p_model is not null and p_model is distinct from coalesce(v_chat.model_config_id, v_previous.model_config_id) then
    raise exception 'a follow-up runs with its chat''s model config' using errcode = 'CIINV', column = 'model_config_id';
  end if;
  if p_workspace is not null and p_workspace is distinct from v_chat.workspace then
    raise exception 'a follow-up runs in its chat''s workspace' using errcode = 'CIINV', column = 'workspace';
  end if;
  if jsonb_array_length(coalesce(p_tools, '[]')) > 0 and p_tools <> v_chat.dynamic_tools then
    raise exception 'tools must be the ones the chat started with (or be left out)' using errcode = 'CIINV', column = 'tools';
  end if;
  v_result := chat_public.send_chat_message(v_chat.id, p_content, p_response_format, 'queue', null);
  insert into chat_private.openai_responses (request_id, chat_id, owner_id, background, echo, body_sha256, idempotency_key)
  values (v_result.structured_output_request_id, v_chat.id, v_user, p_background, p_echo, p_body_sha256, p_idempotency_key);
  return v_result.structured_output_request_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_follow_up_response(uuid, jsonb, text, text, text, jsonb, boolean, jsonb, text, text) is
  E'@behavior -*\nSends new input after a finished Response, in its chat, for /v1/responses (previous_response_id).';
select chat_private.grant_execute('chat_public.openai_follow_up_response(uuid, jsonb, text, text, text, jsonb, boolean, jsonb, text, text)', '{chat_user}');

-- One Response as the caller sees it: the request, its receipt's exact value text, where its chat stands, the /v1
-- record (null for a request created through GraphQL or SQL, which /v1 reads too) and its function calls: the ones
-- the next round answered, or, for the newest round, the ones its turn waits for now. No row: not the caller's; a
-- first Response whose chat was deleted raises SODEL (a round's id goes with its chat).
create or replace function chat_public.openai_response(p_id uuid) returns table (
  response_id uuid, previous_response_id uuid, request_id uuid, chat_id uuid, created_at timestamptz,
  finished_at timestamptz, status text, error_code text, error_message text, value_json text, input_tokens bigint,
  output_tokens bigint, model_config_id text, chat_status text, queued boolean, background boolean, echo jsonb,
  function_calls jsonb, calls_at timestamptz) as $$
declare
  v_user uuid := chat_private.require_user();
  v_round chat_private.openai_response_rounds;
  v_request uuid := p_id;
  v_number integer := 0;
begin
  select x.* into v_round from chat_private.openai_response_rounds x where x.id = p_id and x.owner_id = v_user;
  if v_round.id is not null then
    v_request := v_round.request_id;
    v_number := v_round.round;
  end if;
  return query
  select p_id, v_round.previous_id, r.id, r.chat_id, coalesce(v_round.created_at, r.created_at), r.finished_at,
         r.status::text, r.error_code, r.error_message, (m.structured_output -> 'value')::text, r.input_tokens,
         r.output_tokens, coalesce(r.model_config_id, c.model_config_id), c.status::text,
         exists (select 1 from chat_public.chat_queued_messages q where q.structured_output_request_id = r.id),
         coalesce(v_round.background, o.background, false), coalesce(o.echo, '{}') || coalesce(v_round.echo, '{}'),
         coalesce(n.answered_calls, w.calls), coalesce(n.created_at, w.since)
  from chat_public.structured_output_requests r
  join chat_public.chats c on c.id = r.chat_id
  left join chat_public.chat_messages m on m.id = r.receipt_message_id
  left join chat_private.openai_responses o on o.request_id = r.id
  left join chat_private.openai_response_rounds n on n.request_id = r.id and n.round = v_number + 1
  left join lateral (select c.pending_tool_calls as calls, c.updated_at as since
                     where r.status = 'pending' and c.status = 'requires_action'
                       and chat_private._active_request(c.id) = r.id) w on true
  where r.id = v_request and c.owner_id = v_user;
  if not found and v_number = 0
     and exists (select 1 from chat_private.deleted_requests d where d.id = p_id and d.owner_id = v_user) then
    raise exception 'the Response was deleted with its chat' using errcode = 'SODEL';
  end if;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_response(uuid) is
  E'@behavior -*\nReads one Response for /v1/responses/{id} (the caller''s requests only).';
select chat_private.grant_execute('chat_public.openai_response(uuid)', '{chat_user}');

-- Cancels the request whatever its state: a queued one is deleted from the queue, the running turn that carries it
-- is interrupted, a turn waiting for its client tools ends with an `interrupted` receipt (interrupt_chat would only
-- cancel the calls and go on); a finished one, or a round that a newer round continued, is left as it is (cancel is
-- idempotent). Returns false when the id is not the caller's. While waiting for client tools the operator's cancel
-- rules apply: the same outcome from every state.
create or replace function chat_public.openai_cancel_response(p_id uuid) returns boolean as $$
declare
  v_user uuid := chat_private.require_user();
  v_request chat_public.structured_output_requests;
  v_chat chat_public.chats;
  v_request_id uuid;
  v_superseded boolean;
  v_queued bigint;
begin
  select t.request_id, t.superseded into v_request_id, v_superseded
  from chat_private._openai_response_round(p_id, v_user) t;
  select r.* into v_request from chat_public.structured_output_requests r
  join chat_public.chats c on c.id = r.chat_id
  where r.id = v_request_id and c.owner_id = v_user;
  if not found then
    return false;
  end if;
  if v_request.status <> 'pending' or v_superseded then
    return true;
  end if;
  select q.id into v_queued from chat_public.chat_queued_messages q where q.structured_output_request_id = v_request.id;
  if v_queued is not null then
    perform chat_public.delete_queued_message(v_queued);
    return true;
  end if;
  v_chat := chat_private._begin_transition(v_request.chat_id, 'operator_cancel_request', v_user);
  if v_chat.status = 'running' then
    perform chat_public.interrupt_chat(v_chat.id);
  elsif v_chat.status = 'requires_action' and chat_private._active_request(v_chat.id) = v_request.id then
    perform chat_private._write_receipt(v_request.id, 'canceled', 'interrupted', 'The client canceled the Response.');
    perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: the client canceled the Response',
      chat_private._to_state('operator_cancel_request', 'requires_action', 'running'));
    perform chat_private._promote_after_turn(
      chat_private._end_turn(v_chat.id, 'operator_cancel_request', 'requires_action', false));
    perform chat_private.notify_chat(v_chat.id, 'status');
  end if;
  return true;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.openai_cancel_response(uuid) is
  E'@behavior -*\nCancels a Response for /v1/responses/{id}/cancel (idempotent; a finished one stays as it is).';
select chat_private.grant_execute('chat_public.openai_cancel_response(uuid)', '{chat_user}');
