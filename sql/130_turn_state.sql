-- The worker's turn state (worker/loop/history.ts) as one function, so that acquiring the lease and reading the
-- state share one round trip: `select f.*, chat_private.turn_state(f...)` from acquire_lease. Volatile, so its query
-- takes a fresh snapshot when it runs: called after acquire_lease in the same statement, it sees the lease and
-- everything committed before it, as a separate statement after the acquire would. Security invoker: the worker
-- reads with its own grants and row-level security, as when the query was sent as text.
--
-- One statement, so one snapshot (the history, the turn and the chat agree with each other). The prompt starts at
-- the newest live compaction summary (worker/loop/compaction.ts): the rows it replaced are compressed and older.
-- The boundary, not the compressed flag, decides, so an edit that discards a summary brings the rows it covered
-- back. Bigint ids travel as text. The same statement reads whether compaction is due and the worker's config
-- version (worker/loop/config.ts). `by_client` marks tool results a client submitted (submit_tool_results sets
-- created_by): the worker cuts those to its tool result cap in the prompt, as its own tools' results were cut.
create or replace function chat_private.turn_state(p_chat_id uuid) returns json as $$
begin
  return (
    with boundary as (
      select coalesce(max(s.id), 0) as id from chat_public.chat_messages s
      where s.chat_id = p_chat_id and s.kind = 'summary' and s.visibility = 'model' and not s.deleted)
    select json_build_object(
      'chat', (select row_to_json(c) from (
         select id, status::text as status, model_config_id, workspace, dynamic_tools, plan_mode, parent_chat_id, mcp_server_ids
         from chat_public.chats where id = p_chat_id) c),
      'turn', (select row_to_json(t) from (
         select t.input_message_id::text as input_message_id, t.steps, r.id as request_id, r.schema::text as schema_text,
                t.rejected_batches, t.value_rejected, t.candidate_present
         from chat_private.turn_progress t
         left join chat_public.structured_output_requests r on r.id = t.structured_output_request_id and r.status = 'pending'
         where t.chat_id = p_chat_id and t.finished_at is null) t),
      'history', coalesce((
         select json_agg(json_build_object('id', h.id::text, 'role', h.role, 'content', h.content,
                                           'provider_metadata', h.provider_metadata, 'finish', h.finish,
                                           'by_client', h.by_client) order by h.id)
         from (select m.id, m.role::text as role, m.content, i.provider_metadata, i.finish,
                      m.role = 'tool' and m.created_by is not null as by_client
               from chat_public.chat_messages m left join chat_private.message_internals i on i.message_id = m.id
               where m.chat_id = p_chat_id and not m.deleted and m.visibility in ('model', 'both') and m.kind <> 'receipt'
                 and m.id >= (select b.id from boundary b)) h), '[]'::json),
      'compaction', (select row_to_json(k) from (
         select c.compaction_requested_at is not null as requested, m.context_limit, m.compaction_threshold_percent as threshold,
           (select (x.usage ->> 'inputTokens')::bigint from chat_public.chat_messages x, boundary b
            where x.chat_id = c.id and x.id > b.id and not x.deleted and x.role = 'assistant' and x.kind = 'message'
              and x.usage ? 'inputTokens' order by x.id desc limit 1)::text as tokens,
           (select max(x.id) from chat_public.chat_messages x where x.chat_id = c.id and not x.deleted)::text as up_to
         from chat_public.chats c join chat_private.model_configs m on m.id = c.model_config_id where c.id = p_chat_id) k),
      'config_version', (select v.version::text from chat_private.worker_config_version v where v.id)));
end;
$$ language plpgsql volatile set search_path to pg_catalog, public, pg_temp
  set plan_cache_mode to force_generic_plan;
comment on function chat_private.turn_state(uuid) is
  E'What the worker''s next step needs, in one snapshot: the chat, its open turn, the model-visible history from the newest live summary, whether compaction is due, and the worker config version.';
select chat_private.grant_execute('chat_private.turn_state(uuid)', '{chat_worker}');
