-- Stop hooks and compaction. Their transition rules, policies and table grants are migrations (0008 onwards).
--
-- Stop hooks are configured by operators with plain SQL (chat_private.stop_hooks + stop_hook_secrets); the worker
-- calls them when a turn is about to finish and records a continuation through commit_step (a control row plus
-- the progress record {"hook_continuation": true, "invalidate_candidate": ...}), so no function here writes for
-- them. Compaction is two transitions: compact_chat (a client asks) and compact_history (the runner replaces older
-- history in future prompts with a summary).

-- A client transition that changes no history: it bumps snapshot_version (streams see it) but neither
-- history_version nor generation_attempt, so a running turn keeps its fence and its retry budget.
create or replace function chat_public.compact_chat(chat_id uuid) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
  v_chat chat_public.chats;
begin
  v_chat := chat_private._begin_transition(compact_chat.chat_id, 'compact_chat', v_user);
  update chat_public.chats c set compaction_requested_at = coalesce(c.compaction_requested_at, now())
  where c.id = compact_chat.chat_id returning * into v_chat;
  perform chat_private.notify_chat(compact_chat.chat_id, 'compaction_requested');
  return v_chat;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.compact_chat(uuid) is
  E'Asks for the chat''s history to be compacted: before its next model step the worker summarizes the older history, which future prompts replace by the summary. Originals stay in the transcript, marked `compressed`; receipts are untouched.';
select chat_private.grant_execute('chat_public.compact_chat(uuid)', '{chat_anonymous, chat_user}');

-- p_summary: the model-only summary text (the worker adds its header); p_up_to_message_id: the newest row the
-- summary covers; p_marker: the text of the client-visible marker row; p_usage: the summary call's usage.
-- In one fenced transaction: rows up to p_up_to_message_id are marked compressed (receipts excepted: they are
-- never sent to a model and stay exactly as committed), the summary and the marker are inserted, and the open
-- turn's user input (with any unanswered trailing user input) is carried over verbatim as model-only copies, so
-- the model keeps the request it is working on. turn_progress is not touched: step, repair, continuation and
-- candidate counters survive, and input_message_id still names the original input.
create or replace function chat_private.compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb default null)
returns chat_private.fence as $$
declare
  v_turn chat_private.turn_progress;
  v_last_assistant bigint;
  v_carry jsonb;
begin
  perform chat_private._begin_worker_transition(p_chat_id, 'compact_history', p_runner_id, p_history_version,
                                               p_generation_attempt);
  if p_summary is null or btrim(p_summary) = '' or octet_length(p_summary) > 262144 then
    raise exception 'summary must be non-blank text of at most 256 KiB' using errcode = 'CIINV', column = 'summary';
  end if;
  if p_marker is null or btrim(p_marker) = '' or length(p_marker) > 2000 then
    raise exception 'marker must be non-blank text of at most 2000 characters' using errcode = 'CIINV', column = 'marker';
  end if;
  if not exists (select 1 from chat_public.chat_messages m where m.id = p_up_to_message_id and m.chat_id = p_chat_id
                 and not m.deleted) then
    raise exception 'up_to_message_id is not a live message of this chat' using errcode = 'CIINV',
      column = 'up_to_message_id';
  end if;
  v_turn := chat_private._open_turn(p_chat_id);
  select max(m.id) into v_last_assistant from chat_public.chat_messages m
  where m.chat_id = p_chat_id and m.id <= p_up_to_message_id and not m.deleted and m.role = 'assistant'
    and m.kind = 'message';

  -- Read before the originals are compressed below.
  -- Carried: the open turn's input (or its earlier copy), and user rows no assistant row answered yet (trailing
  -- input, a hook's context, finalizer feedback), which the model has not acted on.
  select coalesce(jsonb_agg(jsonb_build_object('content', m.content, 'created_by', m.created_by, 'kind', m.kind)
                            order by m.id), '[]')
  into v_carry from chat_public.chat_messages m
  where m.chat_id = p_chat_id and m.id <= p_up_to_message_id and not m.deleted and not m.compressed
    and m.role = 'user' and m.visibility in ('model', 'both')
    and ((m.kind = 'message' and m.id >= v_turn.input_message_id)
         or (m.kind in ('message', 'control') and m.id > coalesce(v_last_assistant, 0)));

  update chat_public.chat_messages m set compressed = true
  where m.chat_id = p_chat_id and m.id <= p_up_to_message_id and not m.compressed and not m.deleted
    and m.kind <> 'receipt';

  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, usage)
  values (p_chat_id, 'user', 'model', 'summary', jsonb_build_array(jsonb_build_object('type', 'text', 'text', p_summary)),
          p_usage);
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content)
  values (p_chat_id, 'assistant', 'user', 'summary', jsonb_build_array(jsonb_build_object('type', 'text', 'text', p_marker)));
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, created_by)
  select p_chat_id, 'user', 'model', (c ->> 'kind')::chat_public.message_kind, c -> 'content', (c ->> 'created_by')::uuid
  from jsonb_array_elements(v_carry) with ordinality as e(c, n) order by e.n;

  update chat_public.chats set compaction_requested_at = null where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, 'compacted');
  return chat_private.current_fence(p_chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.compact_history(uuid, uuid, bigint, bigint, text, bigint, text, jsonb) is
  E'Worker: replaces the history up to a message by a model-only summary in future prompts (originals marked compressed, receipts untouched, the open turn''s input carried over), inserts a client-visible marker. Fenced; returns the new fence.';
select chat_private.grant_execute('chat_private.compact_history(uuid, uuid, bigint, bigint, text, bigint, text, jsonb)', '{chat_worker}');


comment on table chat_private.stop_hooks is
  E'Stop hooks: HTTP webhooks called (POST, signed with the secret in stop_hook_secrets) when a turn is about to finish. An answer with a non-blank `model_context` continues the turn once per user request; failures and timeouts fail the turn closed (kind hook_failed).';
comment on table chat_private.stop_hook_secrets is
  E'HMAC-SHA256 signing secrets of the stop hooks. Readable by the worker only, never by chat_operator.';
comment on column chat_public.chats.compaction_requested_at is
  E'Set by compactChat; cleared when the worker has compacted the history.';
