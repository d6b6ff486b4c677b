-- Up Migration
-- Expand, then contract: the helpers that release 5823e57's sql/ functions call under their old names, kept for
-- one release. `chatd migrate` takes its table locks before its first statement (src/db/migrate-locks.ts), so a
-- statement of the running release that calls one of its functions during the migration waits inside that
-- function's body for the first table it reads, and after the commit goes on running the body it had started: the
-- previous release's body, against this release's schema. Its calls to helpers that 0061 renamed (and the two whose
-- arguments grew) would fail with 42883 without these. Each delegates to the helper that replaced it, with the
-- meaning the old caller had. Nothing else calls them: the release after this one drops them (a new migration).
-- plpgsql, so that they can be created before sql/ defines their targets (a fresh install runs migrations first);
-- security invoker: their callers are security definer. PUBLIC gets no EXECUTE (0030's default privileges).
create function chat_private.accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean default true)
returns uuid language plpgsql volatile as $$
begin return chat_private._accept_structured_request(p_chat_id, p_json_schema, p_check_experiment); end $$;
create function chat_private.active_request(p_chat_id uuid) returns uuid language plpgsql stable as $$
begin return chat_private._active_request(p_chat_id); end $$;
create function chat_private.apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[]) returns void
language plpgsql volatile as $$
begin perform chat_private._apply_progress(p_chat_id, p_progress, p_message_ids); end $$;
create function chat_private.begin_transition(p_chat_id uuid, p_transition text, p_owner uuid default null)
returns chat_public.chats language plpgsql volatile as $$
begin return chat_private._begin_transition(p_chat_id, p_transition, p_owner); end $$;
create function chat_private.begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid,
  p_history_version bigint, p_generation_attempt bigint) returns chat_public.chats language plpgsql volatile as $$
begin return chat_private._begin_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version, p_generation_attempt, false); end $$;
-- The old one cleared the pending calls and left the status to its caller.
create function chat_private.cancel_pending_calls(p_chat_id uuid, p_reason text) returns void language plpgsql volatile as $$
begin
  perform chat_private._cancel_pending_calls(p_chat_id, p_reason, (select c.status from chat_public.chats c where c.id = p_chat_id));
end $$;
-- The old one knew no transition table: waiting, or running when a queued input was promoted.
create function chat_private.end_turn_and_promote(p_chat_id uuid) returns chat_public.chat_status language plpgsql volatile as $$
declare
  v_status chat_public.chat_status;
begin
  perform chat_private._close_turn(p_chat_id);
  v_status := case when chat_private._promote_queue_head(p_chat_id) is null then 'waiting' else 'running' end;
  update chat_public.chats set status = v_status, retry_state = null, last_error = null,
    pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = p_chat_id;
  return v_status;
end $$;
create function chat_private.fail_turn(p_chat_id uuid, p_kind text, p_message text) returns void language plpgsql volatile as $$
begin perform chat_private._fail_turn(p_chat_id, p_kind, p_message); end $$;
-- The old release recorded no request hash: a key it wrote has none, and its calls pass none.
create function chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text) returns jsonb
language plpgsql volatile as $$
begin return chat_private.idempotent_result(p_owner, p_key, p_operation, null::text); end $$;
create function chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb) returns void
language plpgsql volatile as $$
begin perform chat_private.remember_result(p_owner, p_key, p_operation, p_result, null::text); end $$;
create function chat_private.insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid) returns bigint
language plpgsql volatile as $$
begin return chat_private._insert_input(p_chat_id, p_content, p_request_id, p_created_by); end $$;
create function chat_private.insert_worker_messages(p_chat_id uuid, p_messages jsonb) returns bigint[] language plpgsql volatile as $$
begin return chat_private._insert_worker_messages(p_chat_id, p_messages); end $$;
create function chat_private.lock_worker_chat(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint,
  p_generation_attempt bigint, p_history_changes boolean) returns chat_public.chats language plpgsql volatile as $$
begin
  return chat_private._begin_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version, p_generation_attempt,
                                               p_history_changes);
end $$;
create function chat_private.open_turn(p_chat_id uuid) returns chat_private.turn_progress language plpgsql stable as $$
begin return chat_private._open_turn(p_chat_id); end $$;
create function chat_private.promote_queue_head(p_chat_id uuid) returns bigint language plpgsql volatile as $$
begin return chat_private._promote_queue_head(p_chat_id); end $$;
create function chat_private.queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean)
returns bigint language plpgsql volatile as $$
begin return chat_private._queue_message(p_chat_id, p_content, p_request_id, p_created_by, p_at_head); end $$;
create function chat_private.record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status,
  p_code text, p_message text, p_value jsonb) returns bigint language plpgsql volatile as $$
begin return chat_private._record_receipt(p_request_id, p_chat_id, p_status, p_code, p_message, p_value); end $$;
create function chat_private.start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid) returns void
language plpgsql volatile as $$
begin perform chat_private._start_turn(p_chat_id, p_input_message_id, p_request_id); end $$;
create function chat_private.write_receipt(p_request_id uuid, p_status chat_public.structured_output_status,
  p_code text default null, p_message text default null, p_value jsonb default null) returns bigint language plpgsql volatile as $$
begin return chat_private._write_receipt(p_request_id, p_status, p_code, p_message, p_value); end $$;
