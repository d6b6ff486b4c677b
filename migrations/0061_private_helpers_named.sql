-- Up Migration
-- The helpers that take the chat lock for a transition or assume their caller holds it are named with a leading _
-- (sql/050 and the files after it define them under the new names), so they stand apart from the worker's and the
-- clients' functions. The old names go; on a fresh database sql/ has not run yet, so they exist only on an
-- upgraded one.
drop function if exists chat_private.begin_transition(uuid, text, uuid);
drop function if exists chat_private.begin_worker_transition(uuid, text, uuid, bigint, bigint);
drop function if exists chat_private.insert_input(uuid, jsonb, uuid, uuid);
drop function if exists chat_private.start_turn(uuid, bigint, uuid);
drop function if exists chat_private.queue_message(uuid, jsonb, uuid, uuid, boolean);
drop function if exists chat_private.promote_queue_head(uuid);
drop function if exists chat_private.write_receipt(uuid, chat_public.structured_output_status, text, text, jsonb);
drop function if exists chat_private.record_receipt(uuid, uuid, chat_public.structured_output_status, text, text, jsonb);
drop function if exists chat_private.receipt_provenance(uuid, uuid);
drop function if exists chat_private.cancel_pending_calls(uuid, text);
drop function if exists chat_private.end_turn_and_promote(uuid);
drop function if exists chat_private.fail_turn(uuid, text, text);
drop function if exists chat_private.insert_worker_messages(uuid, jsonb);
drop function if exists chat_private.apply_progress(uuid, jsonb, bigint[]);
drop function if exists chat_private.accept_structured_request(uuid, jsonb, boolean);
drop function if exists chat_private.active_request(uuid);
drop function if exists chat_private.open_turn(uuid);
