-- The GraphQL projection (src/api, PostGraphile v5): smart tags, the two thin wrappers whose signatures are the
-- public mutation contract, and the computed fields that shape what clients read. Nothing here changes state
-- rules: every wrapper calls the 060 transition, every computed field is security invoker (RLS applies).

-- Smart tags are prepended to the comment the earlier files wrote, so that documentation stays in one place and
-- a re-application (080 rewrites the comments, then this file runs again) never stacks tags twice.
create or replace function chat_private.graphql_tagged(p_comment text, p_tags text) returns text as $$
  select p_tags || coalesce(E'\n' || nullif(regexp_replace(coalesce(p_comment, ''), '^(@[^\n]*\n?)+', ''), ''), '');
$$ language sql immutable set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.graphql_tagged(text, text)', '{}');

do $$
declare
  v_table text;
  v_proc regprocedure;
begin
  -- Clients never write tables: PostGraphile's generated create/update/delete mutations are switched off.
  foreach v_table in array array['chat_public.users', 'chat_public.chats', 'chat_public.chat_messages',
                                 'chat_public.chat_queued_messages', 'chat_public.structured_output_requests'] loop
    execute format('comment on table %s is %L', v_table,
      chat_private.graphql_tagged(obj_description(v_table::regclass, 'pg_class'), '@behavior -insert -update -delete'));
  end loop;
  -- The raw receipt column is replaced by the typed `structuredOutput` field (with the exact `valueJson`).
  execute format('comment on column chat_public.chat_messages.structured_output is %L', chat_private.graphql_tagged(
    col_description('chat_public.chat_messages'::regclass,
      (select attnum from pg_attribute where attrelid = 'chat_public.chat_messages'::regclass and attname = 'structured_output')),
    '@behavior -*'));
  -- `kind` is a condition field (`messages(condition: {kind: RECEIPT})` finds a chat's receipts), although it is not
  -- indexed on its own: it narrows a chat's rows, which the (chat_id, id) index finds.
  execute format('comment on column chat_public.chat_messages.kind is %L', chat_private.graphql_tagged(
    col_description('chat_public.chat_messages'::regclass,
      (select attnum from pg_attribute where attrelid = 'chat_public.chat_messages'::regclass and attname = 'kind')),
    '@behavior +filterBy'));
  -- These two stay callable from SQL; GraphQL reaches them through the wrappers below (send: the busy-behaviour
  -- enum; edit: the API passes what it validated, see src/api/response-format-plugin.ts).
  foreach v_proc in array array['chat_public.send_chat_message(uuid, jsonb, text, text, text)'::regprocedure,
                                'chat_public.edit_chat_message(bigint, jsonb, text, text, bigint)'::regprocedure] loop
    execute format('comment on function %s is %L', v_proc, chat_private.graphql_tagged(obj_description(v_proc, 'pg_proc'),
      format(E'@name %s_checked\n@behavior -*', (select proname from pg_proc where oid = v_proc))));
  end loop;
end $$;

comment on type chat_public.busy_behavior is E'What a message sent to a busy chat does: wait in the queue, or interrupt the running turn.';
comment on type chat_public.structured_output is
  E'The result a receipt carries. `valueJson` is the exact stored JSON text of the value (numbers keep every digit); `value` is the same value as JSON, for convenience. A succeeded receipt whose value is JSON null has `valueJson` "null".';
comment on column chat_public.structured_output.provenance is
  E'How the receipt came about (the request''s finalization attempts, model steps, model, tokens, times, schema hash).';
comment on type chat_public.structured_output_error is E'Why a structured output request failed or was canceled.';

create or replace function chat_public.send_message(
  chat_id uuid,
  content jsonb,
  response_format text default null,
  busy_behavior chat_public.busy_behavior default 'queue',
  idempotency_key text default null
) returns chat_public.chat_input_result as $$
  select * from chat_public.send_chat_message(send_message.chat_id, send_message.content, send_message.response_format,
    coalesce(send_message.busy_behavior, 'queue')::text, send_message.idempotency_key);
$$ language sql volatile set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.send_message(uuid, jsonb, text, chat_public.busy_behavior, text) is
  E'@name send_chat_message\nSends a message. An idle chat starts a turn at once; a busy one queues it (QUEUE) or queues it at the head and interrupts the running turn (INTERRUPT). `responseFormat` is the JSON text of the response_format envelope. Returns the message or the queued message, with the structured request id when `responseFormat` asks for one.';
select chat_private.grant_execute('chat_public.send_message(uuid, jsonb, text, chat_public.busy_behavior, text)', '{chat_anonymous, chat_user}');

-- From raw SQL this is edit_chat_message without the preserve recheck; the GraphQL API replaces the call with the
-- checked function and the facts it validated.
create or replace function chat_public.edit_message(
  message_id bigint,
  content jsonb,
  response_format text default null
) returns chat_public.chat_input_result as $$
  select * from chat_public.edit_chat_message(edit_message.message_id, edit_message.content, edit_message.response_format,
    null, null);
$$ language sql volatile set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.edit_message(bigint, jsonb, text) is
  E'@name edit_chat_message\nReplaces a user message: later history and the queue are discarded, pending structured requests among them get `superseded` receipts, and the replacement starts a turn. `responseFormat` omitted or null keeps the edited message''s format (validated again, under a fresh request id), {"type":"text"} clears it, a json_schema replaces it.';
select chat_private.grant_execute('chat_public.edit_message(bigint, jsonb, text)', '{chat_anonymous, chat_user}');

create or replace function chat_public.structured_output_enabled() returns boolean as $$
  select chat_private.experiment_enabled('chat-structured-output');
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.structured_output_enabled() is
  E'Whether this server accepts new structured output requests (experiment `chat-structured-output`). Accepted requests finish and stay readable either way.';
select chat_private.grant_execute('chat_public.structured_output_enabled()', '{chat_anonymous, chat_user, chat_operator}');

-- Reads the receipt again by id instead of using the row argument: PostGraphile may round-trip a row through
-- JavaScript (JSON.parse) before passing it to a computed field, which would round big numbers in the value.
create or replace function chat_public.chat_messages_structured_output(m chat_public.chat_messages)
returns chat_public.structured_output as $$
  select (r.structured_output_request_id, (r.structured_output ->> 'status')::chat_public.structured_output_status,
          r.structured_output -> 'value', (r.structured_output -> 'value')::text,
          case when r.structured_output ? 'error' then
            (r.structured_output -> 'error' ->> 'code', r.structured_output -> 'error' ->> 'message')::chat_public.structured_output_error
          end,
          (q.finalization_attempts, q.model_steps, q.model_config_id, q.provider, q.model, q.input_tokens, q.output_tokens,
           q.started_at, q.finished_at, q.schema_sha256)::chat_public.structured_output_provenance
         )::chat_public.structured_output
  from chat_public.chat_messages r
  left join chat_public.structured_output_requests q on q.id = r.structured_output_request_id
  where r.id = m.id and r.structured_output is not null;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_messages_structured_output(chat_public.chat_messages) is
  E'The result this receipt carries; null on every other message (only receipts carry results).';
select chat_private.grant_execute('chat_public.chat_messages_structured_output(chat_public.chat_messages)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chats_messages(c chat_public.chats, after_id bigint default null,
  before_id bigint default null) returns setof chat_public.chat_messages as $$
  select m.* from chat_public.chat_messages m
  where m.chat_id = c.id and (after_id is null or m.id > after_id) and (before_id is null or m.id < before_id)
  order by m.id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chats_messages(chat_public.chats, bigint, bigint) is
  E'@behavior +filter\nThe transcript in `rowId` order. `afterId`/`beforeId` are message `rowId`s (the stream cursor); page backwards with `beforeId` and `last`. `condition: {kind: RECEIPT}` reads only the receipts.';
select chat_private.grant_execute('chat_public.chats_messages(chat_public.chats, bigint, bigint)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chats_queue(c chat_public.chats) returns chat_public.chat_queued_messages[] as $$
  select coalesce(array_agg(q order by q.position), '{}') from chat_public.chat_queued_messages q where q.chat_id = c.id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chats_queue(chat_public.chats) is E'Queued inputs in the order they will run.';
select chat_private.grant_execute('chat_public.chats_queue(chat_public.chats)', '{chat_anonymous, chat_user, chat_operator}');

-- A count rather than the nested requests connection: a chat list that reads every request of every chat to count
-- the pending ones is what the GraphQL cost limit (TOO_MANY_NODES) refuses, and the partial index answers this.
create or replace function chat_public.chats_pending_structured_requests(c chat_public.chats) returns integer as $$
  select count(*)::int from chat_public.structured_output_requests r where r.chat_id = c.id and r.status = 'pending';
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chats_pending_structured_requests(chat_public.chats) is
  E'@notNull\nHow many of the chat''s structured requests have no receipt yet.';
select chat_private.grant_execute('chat_public.chats_pending_structured_requests(chat_public.chats)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chat_input_result_chat(r chat_public.chat_input_result) returns chat_public.chats as $$
  select c.* from chat_public.chats c where c.id = r.chat_id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_input_result_chat(chat_public.chat_input_result) is E'@behavior -queryField\nThe chat.';
select chat_private.grant_execute('chat_public.chat_input_result_chat(chat_public.chat_input_result)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chat_input_result_message(r chat_public.chat_input_result)
returns chat_public.chat_messages as $$
  select m.* from chat_public.chat_messages m where m.id = r.message_id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_input_result_message(chat_public.chat_input_result) is
  E'@behavior -queryField\nThe message that started a turn, when the input started one.';
select chat_private.grant_execute('chat_public.chat_input_result_message(chat_public.chat_input_result)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chat_input_result_queued_message(r chat_public.chat_input_result)
returns chat_public.chat_queued_messages as $$
  select q.* from chat_public.chat_queued_messages q where q.id = r.queued_message_id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_input_result_queued_message(chat_public.chat_input_result) is
  E'@behavior -queryField\nThe queued message, while it waits in the queue.';
select chat_private.grant_execute('chat_public.chat_input_result_queued_message(chat_public.chat_input_result)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result)
returns chat_public.structured_output_requests as $$
  select s.* from chat_public.structured_output_requests s where s.id = r.structured_output_request_id;
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_input_result_structured_output_request(chat_public.chat_input_result) is
  E'@behavior -queryField\nThe structured output request the input created (or, for a deleted queued message, ended).';
select chat_private.grant_execute('chat_public.chat_input_result_structured_output_request(chat_public.chat_input_result)', '{chat_anonymous, chat_user, chat_operator}');

create or replace function chat_public.chat_input_result_receipts(r chat_public.chat_input_result)
returns chat_public.chat_messages[] as $$
  select coalesce(array_agg(m order by m.id), '{}') from chat_public.chat_messages m where m.id = any (r.receipt_message_ids);
$$ language sql stable set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.chat_input_result_receipts(chat_public.chat_input_result) is
  E'@behavior -queryField\nReceipts the input committed (edit supersession, queue deletion), in id order.';
select chat_private.grant_execute('chat_public.chat_input_result_receipts(chat_public.chat_input_result)', '{chat_anonymous, chat_user, chat_operator}');
