-- The envelope rules of `response_format` that SQL can see on a parsed jsonb value. The sanctioned entry
-- points validate the full request in TypeScript first (duplicate keys, exact numbers, the schema itself); these
-- checks keep raw SQL callers inside the same envelope. The cases live in test/fixtures/response-format-envelope.json.

create or replace function chat_private.response_format_errors(p_format jsonb)
returns table (field text, detail text) as $$
declare
  v_key text;
  v_type jsonb;
  v_js jsonb;
begin
  if p_format is null or jsonb_typeof(p_format) <> 'object' then
    return query select 'response_format', 'must be a JSON object';
    return;
  end if;
  -- Unknown fields are rare: subtracting the known ones finds them without running a query in the common case.
  if p_format - '{type,json_schema}'::text[] <> '{}' then
    for v_key in select k from jsonb_object_keys(p_format - '{type,json_schema}'::text[]) k order by k loop
      return query select 'response_format.' || v_key, 'is not a known field';
    end loop;
  end if;
  v_type := p_format -> 'type';
  if v_type is null then
    return query select 'response_format.type', 'is required';
    return;
  end if;
  if jsonb_typeof(v_type) <> 'string' or v_type #>> '{}' not in ('text', 'json_schema') then
    return query select 'response_format.type', 'must be "text" or "json_schema"';
    return;
  end if;
  v_js := p_format -> 'json_schema';
  if v_type #>> '{}' = 'text' then
    if v_js is not null then
      return query select 'response_format.json_schema', 'is not allowed when type is "text"';
    end if;
    return;
  end if;
  if v_js is null then
    return query select 'response_format.json_schema', 'is required when type is "json_schema"';
    return;
  end if;
  if jsonb_typeof(v_js) <> 'object' then
    return query select 'response_format.json_schema', 'must be a JSON object';
    return;
  end if;
  if v_js - '{name,description,schema}'::text[] <> '{}' then
    for v_key in select k from jsonb_object_keys(v_js - '{name,description,schema}'::text[]) k order by k loop
      return query select 'response_format.json_schema.' || v_key, 'is not a known field';
    end loop;
  end if;
  if v_js -> 'name' is null then
    return query select 'response_format.json_schema.name', 'is required';
  elsif jsonb_typeof(v_js -> 'name') <> 'string' or (v_js ->> 'name') !~ '^[A-Za-z0-9_-]{1,64}$' then
    return query select 'response_format.json_schema.name', 'must match ^[A-Za-z0-9_-]{1,64}$';
  end if;
  if v_js -> 'description' is not null and (jsonb_typeof(v_js -> 'description') <> 'string'
      or octet_length(v_js ->> 'description') > 1024) then
    return query select 'response_format.json_schema.description', 'must be a string of at most 1024 UTF-8 bytes';
  end if;
  if v_js -> 'schema' is null then
    return query select 'response_format.json_schema.schema', 'is required';
  elsif jsonb_typeof(v_js -> 'schema') <> 'object' then
    return query select 'response_format.json_schema.schema', 'must be a JSON object (a JSON Schema document)';
  elsif octet_length((v_js -> 'schema')::text) > 262144 then
    return query select 'response_format.json_schema.schema', 'is too large';
  end if;
end;
$$ language plpgsql immutable set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.response_format_errors(jsonb) is
  E'Envelope errors of a response_format value, as (field, detail) rows; no rows when the envelope is acceptable.';
select chat_private.grant_execute('chat_private.response_format_errors(jsonb)', '{chat_operator, chat_worker}');

-- Parses the client's JSON text and returns the json_schema envelope, or null for text behaviour.
create or replace function chat_private.parse_response_format(p_text text) returns jsonb as $$
declare
  v_format jsonb;
  v_error record;
begin
  if p_text is null then
    return null;
  end if;
  if octet_length(p_text) > 1048576 then
    raise exception 'response_format is too large' using errcode = 'RFINV', column = 'response_format';
  end if;
  begin
    v_format := p_text::jsonb;
  exception when invalid_text_representation then
    raise exception 'response_format is not valid JSON' using errcode = 'RFINV', column = 'response_format';
  end;
  if v_format = 'null'::jsonb then
    return null;
  end if;
  select * into v_error from chat_private.response_format_errors(v_format) limit 1;
  if found then
    raise exception '% %', v_error.field, v_error.detail using errcode = 'RFINV', column = v_error.field,
      detail = v_error.detail;
  end if;
  if v_format ->> 'type' = 'text' then
    return null;
  end if;
  return v_format -> 'json_schema';
end;
$$ language plpgsql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.parse_response_format(text)', '{}');

-- No SET clause, so PostgreSQL inlines it into the calling statement instead of planning it on every call; every
-- name is qualified, so the caller's search_path cannot redirect it. Stable, as convert_to is: PostgreSQL does not
-- inline a function declared more immutable than its body.
create or replace function chat_private.schema_sha256(p_schema jsonb) returns text as $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_schema::pg_catalog.text, 'UTF8')), 'hex');
$$ language sql stable;
select chat_private.grant_execute('chat_private.schema_sha256(jsonb)', '{chat_operator, chat_worker}');

-- The state-dependent admission rules, checked under the chat lock. Returns the new request id.
-- p_check_experiment is false only for work accepted earlier as a whole (a batch's items).
create or replace function chat_private._accept_structured_request(p_chat_id uuid, p_json_schema jsonb,
  p_check_experiment boolean default true)
returns uuid as $$
declare
  v_chat chat_public.chats;
  v_id uuid;
begin
  select * into v_chat from chat_public.chats where id = p_chat_id;
  if p_check_experiment and not chat_private.experiment_enabled('chat-structured-output') then
    raise exception 'structured output is disabled on this server (experiment chat-structured-output)'
      using errcode = 'RFOFF', column = 'response_format';
  end if;
  if v_chat.plan_mode then
    raise exception 'structured output is not available in plan mode' using errcode = 'RFPLN', column = 'response_format';
  end if;
  if v_chat.parent_chat_id is not null then
    raise exception 'child chats do not accept structured output requests' using errcode = 'RFCHD', column = 'response_format';
  end if;
  -- Chats created since check_dynamic_tools refuses the name never get here; older ones may hold such a tool.
  if exists (select 1 from jsonb_array_elements(v_chat.dynamic_tools) t where t ->> 'name' = 'coder_structured_output') then
    raise exception 'the chat declares a dynamic tool named coder_structured_output, which is reserved'
      using errcode = 'RFTNM', column = 'dynamic_tools';
  end if;
  insert into chat_public.structured_output_requests (chat_id, name, description, schema, schema_sha256)
  values (p_chat_id, p_json_schema ->> 'name', p_json_schema ->> 'description', p_json_schema -> 'schema',
          chat_private.schema_sha256(p_json_schema -> 'schema'))
  returning id into v_id;
  return v_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private._accept_structured_request(uuid, jsonb, boolean)', '{}');
