-- ACL - SCHEMA chat_private
GRANT USAGE ON SCHEMA chat_private TO chat_operator;
GRANT USAGE ON SCHEMA chat_private TO chat_worker;
GRANT USAGE ON SCHEMA chat_private TO chatd_api;

-- ACL - SCHEMA chat_public
GRANT USAGE ON SCHEMA chat_public TO chat_anonymous;
GRANT USAGE ON SCHEMA chat_public TO chat_operator;
GRANT USAGE ON SCHEMA chat_public TO chat_user;
GRANT USAGE ON SCHEMA chat_public TO chat_worker;

-- ACL chat_private FUNCTION _accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean)
REVOKE ALL ON FUNCTION chat_private._accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _active_request(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private._active_request(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[])
REVOKE ALL ON FUNCTION chat_private._apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[]) FROM PUBLIC;

-- ACL chat_private FUNCTION _begin_transition(p_chat_id uuid, p_transition text, p_owner uuid)
REVOKE ALL ON FUNCTION chat_private._begin_transition(p_chat_id uuid, p_transition text, p_owner uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_moves_history boolean)
REVOKE ALL ON FUNCTION chat_private._begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_moves_history boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _cancel_pending_calls(p_chat_id uuid, p_reason text, p_status chat_public.chat_status)
REVOKE ALL ON FUNCTION chat_private._cancel_pending_calls(p_chat_id uuid, p_reason text, p_status chat_public.chat_status) FROM PUBLIC;

-- ACL chat_private FUNCTION _check_transition_rule(p_chat chat_public.chats, p_transition text)
REVOKE ALL ON FUNCTION chat_private._check_transition_rule(p_chat chat_public.chats, p_transition text) FROM PUBLIC;

-- ACL chat_private FUNCTION _close_turn(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private._close_turn(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _delete_chats(p_chat_ids uuid[])
REVOKE ALL ON FUNCTION chat_private._delete_chats(p_chat_ids uuid[]) FROM PUBLIC;

-- ACL chat_private FUNCTION _end_turn(p_chat_id uuid, p_transition text, p_from_state text, p_bump boolean)
REVOKE ALL ON FUNCTION chat_private._end_turn(p_chat_id uuid, p_transition text, p_from_state text, p_bump boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _fail_turn(p_chat_id uuid, p_kind text, p_message text)
REVOKE ALL ON FUNCTION chat_private._fail_turn(p_chat_id uuid, p_kind text, p_message text) FROM PUBLIC;

-- ACL chat_private FUNCTION _fence_history(p_chat_id uuid, p_bump boolean)
REVOKE ALL ON FUNCTION chat_private._fence_history(p_chat_id uuid, p_bump boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _finish_locked_turn(p_chat_id uuid, p_outcome jsonb)
REVOKE ALL ON FUNCTION chat_private._finish_locked_turn(p_chat_id uuid, p_outcome jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION _insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid)
REVOKE ALL ON FUNCTION chat_private._insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _insert_worker_messages(p_chat_id uuid, p_messages jsonb)
REVOKE ALL ON FUNCTION chat_private._insert_worker_messages(p_chat_id uuid, p_messages jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION _lease_is_live(p_chat_id uuid, p_runner_id uuid)
REVOKE ALL ON FUNCTION chat_private._lease_is_live(p_chat_id uuid, p_runner_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _lock_for_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint)
REVOKE ALL ON FUNCTION chat_private._lock_for_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint) FROM PUBLIC;

-- ACL chat_private FUNCTION _open_turn(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private._open_turn(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _openai_response_round(p_id uuid, p_user uuid, OUT request_id uuid, OUT round integer, OUT superseded boolean)
REVOKE ALL ON FUNCTION chat_private._openai_response_round(p_id uuid, p_user uuid, OUT request_id uuid, OUT round integer, OUT superseded boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _promote_after_turn(p_chat chat_public.chats)
REVOKE ALL ON FUNCTION chat_private._promote_after_turn(p_chat chat_public.chats) FROM PUBLIC;

-- ACL chat_private FUNCTION _promote_queue_head(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private._promote_queue_head(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean)
REVOKE ALL ON FUNCTION chat_private._queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION _receipt_provenance(p_request_id uuid, p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private._receipt_provenance(p_request_id uuid, p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb)
REVOKE ALL ON FUNCTION chat_private._record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION _server_epoch()
REVOKE ALL ON FUNCTION chat_private._server_epoch() FROM PUBLIC;

-- ACL chat_private FUNCTION _start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid)
REVOKE ALL ON FUNCTION chat_private._start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION _to_state(p_transition text, p_from_state text, p_to_state text)
REVOKE ALL ON FUNCTION chat_private._to_state(p_transition text, p_from_state text, p_to_state text) FROM PUBLIC;

-- ACL chat_private FUNCTION _transition_rule(p_transition text, p_from_state text)
REVOKE ALL ON FUNCTION chat_private._transition_rule(p_transition text, p_from_state text) FROM PUBLIC;

-- ACL chat_private FUNCTION _write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb)
REVOKE ALL ON FUNCTION chat_private._write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean)
REVOKE ALL ON FUNCTION chat_private.accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer)
GRANT ALL ON FUNCTION chat_private.acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer) FROM PUBLIC;

-- ACL chat_private FUNCTION active_request(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private.active_request(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION add_job(p_task text, p_payload json, p_job_key text, p_run_at timestamp with time zone, p_max_attempts integer)
REVOKE ALL ON FUNCTION chat_private.add_job(p_task text, p_payload json, p_job_key text, p_run_at timestamp with time zone, p_max_attempts integer) FROM PUBLIC;

-- ACL chat_private FUNCTION agent_child(p_parent uuid, p_child uuid)
REVOKE ALL ON FUNCTION chat_private.agent_child(p_parent uuid, p_child uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION agent_interrupt(p_parent uuid, p_runner uuid, p_child uuid)
GRANT ALL ON FUNCTION chat_private.agent_interrupt(p_parent uuid, p_runner uuid, p_child uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.agent_interrupt(p_parent uuid, p_runner uuid, p_child uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION agent_send(p_parent uuid, p_runner uuid, p_child uuid, p_content jsonb, p_interrupt boolean)
GRANT ALL ON FUNCTION chat_private.agent_send(p_parent uuid, p_runner uuid, p_child uuid, p_content jsonb, p_interrupt boolean) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.agent_send(p_parent uuid, p_runner uuid, p_child uuid, p_content jsonb, p_interrupt boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[])
REVOKE ALL ON FUNCTION chat_private.apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[]) FROM PUBLIC;

-- ACL chat_private FUNCTION begin_transition(p_chat_id uuid, p_transition text, p_owner uuid)
REVOKE ALL ON FUNCTION chat_private.begin_transition(p_chat_id uuid, p_transition text, p_owner uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint)
REVOKE ALL ON FUNCTION chat_private.begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint) FROM PUBLIC;

-- ACL chat_private FUNCTION cancel_batch_as(p_batch_id uuid, p_owner uuid, p_reason text)
REVOKE ALL ON FUNCTION chat_private.cancel_batch_as(p_batch_id uuid, p_owner uuid, p_reason text) FROM PUBLIC;

-- ACL chat_private FUNCTION cancel_pending_calls(p_chat_id uuid, p_reason text)
REVOKE ALL ON FUNCTION chat_private.cancel_pending_calls(p_chat_id uuid, p_reason text) FROM PUBLIC;

-- ACL chat_private FUNCTION cancel_requires_action(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.cancel_requires_action(p_chat_id uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.cancel_requires_action(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION chat_notification(p_chat chat_public.chats, p_change text)
REVOKE ALL ON FUNCTION chat_private.chat_notification(p_chat chat_public.chats, p_change text) FROM PUBLIC;

-- ACL chat_private FUNCTION chat_state(p_chat chat_public.chats)
REVOKE ALL ON FUNCTION chat_private.chat_state(p_chat chat_public.chats) FROM PUBLIC;

-- ACL chat_private FUNCTION check_agent_runner(p_parent uuid, p_runner uuid)
REVOKE ALL ON FUNCTION chat_private.check_agent_runner(p_parent uuid, p_runner uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION check_client_key(p_key text)
REVOKE ALL ON FUNCTION chat_private.check_client_key(p_key text) FROM PUBLIC;

-- ACL chat_private FUNCTION check_dynamic_tools(p_tools jsonb)
REVOKE ALL ON FUNCTION chat_private.check_dynamic_tools(p_tools jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION check_input_content(p_content jsonb, p_field text)
REVOKE ALL ON FUNCTION chat_private.check_input_content(p_content jsonb, p_field text) FROM PUBLIC;

-- ACL chat_private FUNCTION check_workspace(p_workspace text)
REVOKE ALL ON FUNCTION chat_private.check_workspace(p_workspace text) FROM PUBLIC;

-- ACL chat_private FUNCTION commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_deltas text[])
GRANT ALL ON FUNCTION chat_private.commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_deltas text[]) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_deltas text[]) FROM PUBLIC;

-- ACL chat_private FUNCTION commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb, p_deltas text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status)
GRANT ALL ON FUNCTION chat_private.commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb, p_deltas text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb, p_deltas text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status) FROM PUBLIC;

-- ACL chat_private FUNCTION compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb)
GRANT ALL ON FUNCTION chat_private.compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION complete_batch_if_done(p_batch_id uuid)
REVOKE ALL ON FUNCTION chat_private.complete_batch_if_done(p_batch_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION create_chat_as(p_owner uuid, p_content jsonb, p_format jsonb, p_model_config_id text, p_title text, p_workspace text, p_dynamic_tools jsonb, p_plan_mode boolean, p_idempotency_key text, p_check_experiment boolean)
REVOKE ALL ON FUNCTION chat_private.create_chat_as(p_owner uuid, p_content jsonb, p_format jsonb, p_model_config_id text, p_title text, p_workspace text, p_dynamic_tools jsonb, p_plan_mode boolean, p_idempotency_key text, p_check_experiment boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION current_fence(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.current_fence(p_chat_id uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.current_fence(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION dispatch_batch(p_batch_id uuid)
GRANT ALL ON FUNCTION chat_private.dispatch_batch(p_batch_id uuid) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.dispatch_batch(p_batch_id uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.dispatch_batch(p_batch_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION end_turn_and_promote(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private.end_turn_and_promote(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION enqueue_chat_run(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private.enqueue_chat_run(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer)
GRANT ALL ON FUNCTION chat_private.enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer) FROM PUBLIC;

-- ACL chat_private FUNCTION experiment_enabled(p_name text)
REVOKE ALL ON FUNCTION chat_private.experiment_enabled(p_name text) FROM PUBLIC;

-- ACL chat_private FUNCTION fail_turn(p_chat_id uuid, p_kind text, p_message text)
REVOKE ALL ON FUNCTION chat_private.fail_turn(p_chat_id uuid, p_kind text, p_message text) FROM PUBLIC;

-- ACL chat_private FUNCTION fill_batch_slot(p_batch chat_public.batches, p_slot integer)
REVOKE ALL ON FUNCTION chat_private.fill_batch_slot(p_batch chat_public.batches, p_slot integer) FROM PUBLIC;

-- ACL chat_private FUNCTION finish_batch_validation(p_batch_id uuid, p_error text)
GRANT ALL ON FUNCTION chat_private.finish_batch_validation(p_batch_id uuid, p_error text) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.finish_batch_validation(p_batch_id uuid, p_error text) FROM PUBLIC;

-- ACL chat_private FUNCTION finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text)
GRANT ALL ON FUNCTION chat_private.finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text) FROM PUBLIC;

-- ACL chat_private FUNCTION finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb)
GRANT ALL ON FUNCTION chat_private.finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb)
GRANT ALL ON FUNCTION chat_private.finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION grant_execute(p_function regprocedure, p_roles text[])
REVOKE ALL ON FUNCTION chat_private.grant_execute(p_function regprocedure, p_roles text[]) FROM PUBLIC;

-- ACL chat_private FUNCTION graphql_tagged(p_comment text, p_tags text)
REVOKE ALL ON FUNCTION chat_private.graphql_tagged(p_comment text, p_tags text) FROM PUBLIC;

-- ACL chat_private FUNCTION idempotent_result(p_owner uuid, p_key text, p_operation text)
REVOKE ALL ON FUNCTION chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text) FROM PUBLIC;

-- ACL chat_private FUNCTION idempotent_result(p_owner uuid, p_key text, p_operation text, p_request_sha256 text)
REVOKE ALL ON FUNCTION chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text, p_request_sha256 text) FROM PUBLIC;

-- ACL chat_private FUNCTION insert_batch(p_owner uuid, p_format jsonb, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text)
REVOKE ALL ON FUNCTION chat_private.insert_batch(p_owner uuid, p_format jsonb, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text) FROM PUBLIC;

-- ACL chat_private FUNCTION insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid)
REVOKE ALL ON FUNCTION chat_private.insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION insert_worker_messages(p_chat_id uuid, p_messages jsonb)
REVOKE ALL ON FUNCTION chat_private.insert_worker_messages(p_chat_id uuid, p_messages jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION lease_row_is_live(p_expires_at timestamp with time zone)
GRANT ALL ON FUNCTION chat_private.lease_row_is_live(p_expires_at timestamp with time zone) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.lease_row_is_live(p_expires_at timestamp with time zone) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.lease_row_is_live(p_expires_at timestamp with time zone) FROM PUBLIC;

-- ACL chat_private FUNCTION lock_worker_chat(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_history_changes boolean)
REVOKE ALL ON FUNCTION chat_private.lock_worker_chat(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_history_changes boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION notify_batch(p_batch_id uuid, p_change text)
REVOKE ALL ON FUNCTION chat_private.notify_batch(p_batch_id uuid, p_change text) FROM PUBLIC;

-- ACL chat_private FUNCTION notify_chat(p_chat_id uuid, p_change text)
REVOKE ALL ON FUNCTION chat_private.notify_chat(p_chat_id uuid, p_change text) FROM PUBLIC;

-- ACL chat_private FUNCTION notify_chat_row(p_chat chat_public.chats, p_change text)
REVOKE ALL ON FUNCTION chat_private.notify_chat_row(p_chat chat_public.chats, p_change text) FROM PUBLIC;

-- ACL chat_private FUNCTION open_turn(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private.open_turn(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION openai_idempotent_response(p_user uuid, p_idempotency_key text, p_body_sha256 text)
REVOKE ALL ON FUNCTION chat_private.openai_idempotent_response(p_user uuid, p_idempotency_key text, p_body_sha256 text) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_cancel_batch(p_batch_id uuid, p_reason text)
GRANT ALL ON FUNCTION chat_private.operator_cancel_batch(p_batch_id uuid, p_reason text) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_cancel_batch(p_batch_id uuid, p_reason text) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_cancel_request(p_request_id uuid, p_reason text)
GRANT ALL ON FUNCTION chat_private.operator_cancel_request(p_request_id uuid, p_reason text) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.operator_cancel_request(p_request_id uuid, p_reason text) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.operator_cancel_request(p_request_id uuid, p_reason text) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text)
GRANT ALL ON FUNCTION chat_private.operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_delete_chat(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.operator_delete_chat(p_chat_id uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_delete_chat(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_delete_user(p_user_id uuid)
GRANT ALL ON FUNCTION chat_private.operator_delete_user(p_user_id uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_delete_user(p_user_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_release_lease(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.operator_release_lease(p_chat_id uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_release_lease(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION operator_retry_chat(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.operator_retry_chat(p_chat_id uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.operator_retry_chat(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION parse_response_format(p_text text)
REVOKE ALL ON FUNCTION chat_private.parse_response_format(p_text text) FROM PUBLIC;

-- ACL chat_private FUNCTION promote_queue_head(p_chat_id uuid)
REVOKE ALL ON FUNCTION chat_private.promote_queue_head(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean)
REVOKE ALL ON FUNCTION chat_private.queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean) FROM PUBLIC;

-- ACL chat_private FUNCTION record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb)
REVOKE ALL ON FUNCTION chat_private.record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb)
GRANT ALL ON FUNCTION chat_private.record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION release_lease(p_chat_id uuid, p_runner_id uuid)
GRANT ALL ON FUNCTION chat_private.release_lease(p_chat_id uuid, p_runner_id uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.release_lease(p_chat_id uuid, p_runner_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb)
REVOKE ALL ON FUNCTION chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb, p_request_sha256 text)
REVOKE ALL ON FUNCTION chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb, p_request_sha256 text) FROM PUBLIC;

-- ACL chat_private FUNCTION renew_lease(p_chat_id uuid, p_runner_id uuid, p_lease_seconds integer)
GRANT ALL ON FUNCTION chat_private.renew_lease(p_chat_id uuid, p_runner_id uuid, p_lease_seconds integer) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.renew_lease(p_chat_id uuid, p_runner_id uuid, p_lease_seconds integer) FROM PUBLIC;

-- ACL chat_private FUNCTION renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[])
GRANT ALL ON FUNCTION chat_private.renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[]) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[]) FROM PUBLIC;

-- ACL chat_private FUNCTION report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric)
GRANT ALL ON FUNCTION chat_private.report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric) FROM PUBLIC;

-- ACL chat_private FUNCTION report_worker_stopped(p_queue_id text)
GRANT ALL ON FUNCTION chat_private.report_worker_stopped(p_queue_id text) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.report_worker_stopped(p_queue_id text) FROM PUBLIC;

-- ACL chat_private FUNCTION request_sha256(p_request jsonb)
REVOKE ALL ON FUNCTION chat_private.request_sha256(p_request jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION require_user()
REVOKE ALL ON FUNCTION chat_private.require_user() FROM PUBLIC;

-- ACL chat_private FUNCTION response_format_errors(p_format jsonb)
GRANT ALL ON FUNCTION chat_private.response_format_errors(p_format jsonb) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.response_format_errors(p_format jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.response_format_errors(p_format jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION retention_candidates(p_rule text, p_limit integer)
REVOKE ALL ON FUNCTION chat_private.retention_candidates(p_rule text, p_limit integer) FROM PUBLIC;

-- ACL chat_private FUNCTION retention_due()
GRANT ALL ON FUNCTION chat_private.retention_due() TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.retention_due() FROM PUBLIC;

-- ACL chat_private FUNCTION run_retention()
GRANT ALL ON FUNCTION chat_private.run_retention() TO chat_operator;
GRANT ALL ON FUNCTION chat_private.run_retention() TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.run_retention() FROM PUBLIC;

-- ACL chat_private FUNCTION schema_sha256(p_schema jsonb)
GRANT ALL ON FUNCTION chat_private.schema_sha256(p_schema jsonb) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.schema_sha256(p_schema jsonb) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.schema_sha256(p_schema jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION service_gauges()
GRANT ALL ON FUNCTION chat_private.service_gauges() TO chat_worker;
GRANT ALL ON FUNCTION chat_private.service_gauges() TO chatd_api;
REVOKE ALL ON FUNCTION chat_private.service_gauges() FROM PUBLIC;

-- ACL chat_private FUNCTION setting(p_name text)
GRANT ALL ON FUNCTION chat_private.setting(p_name text) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.setting(p_name text) FROM PUBLIC;

-- ACL chat_private FUNCTION setting_int(p_name text)
GRANT ALL ON FUNCTION chat_private.setting_int(p_name text) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.setting_int(p_name text) FROM PUBLIC;

-- ACL chat_private FUNCTION spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text)
GRANT ALL ON FUNCTION chat_private.spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text) FROM PUBLIC;

-- ACL chat_private FUNCTION start_batch_item(p_batch chat_public.batches, p_line integer, p_content jsonb, p_slot integer)
REVOKE ALL ON FUNCTION chat_private.start_batch_item(p_batch chat_public.batches, p_line integer, p_content jsonb, p_slot integer) FROM PUBLIC;

-- ACL chat_private FUNCTION start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid)
REVOKE ALL ON FUNCTION chat_private.start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION sweep_batches(p_stale interval)
GRANT ALL ON FUNCTION chat_private.sweep_batches(p_stale interval) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.sweep_batches(p_stale interval) FROM PUBLIC;

-- ACL chat_private FUNCTION sweep_expired_leases()
GRANT ALL ON FUNCTION chat_private.sweep_expired_leases() TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.sweep_expired_leases() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_batches__webhook()
REVOKE ALL ON FUNCTION chat_private.tg_batches__webhook() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chat_messages__fence_delete()
REVOKE ALL ON FUNCTION chat_private.tg_chat_messages__fence_delete() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chat_messages__fence_update()
REVOKE ALL ON FUNCTION chat_private.tg_chat_messages__fence_update() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chat_messages__guard_receipts()
REVOKE ALL ON FUNCTION chat_private.tg_chat_messages__guard_receipts() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chat_messages__stamp_revision_and_fence_history()
REVOKE ALL ON FUNCTION chat_private.tg_chat_messages__stamp_revision_and_fence_history() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chat_queued_messages__bump_queue_version()
REVOKE ALL ON FUNCTION chat_private.tg_chat_queued_messages__bump_queue_version() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chats__enqueue_run()
REVOKE ALL ON FUNCTION chat_private.tg_chats__enqueue_run() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chats__touch()
REVOKE ALL ON FUNCTION chat_private.tg_chats__touch() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_chats__webhook_function_calls()
REVOKE ALL ON FUNCTION chat_private.tg_chats__webhook_function_calls() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_structured_output_requests__finish_batch_item()
REVOKE ALL ON FUNCTION chat_private.tg_structured_output_requests__finish_batch_item() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_structured_output_requests__webhook()
REVOKE ALL ON FUNCTION chat_private.tg_structured_output_requests__webhook() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_turn_progress__enqueue_run()
REVOKE ALL ON FUNCTION chat_private.tg_turn_progress__enqueue_run() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_webhook_endpoints__fail_pending_deliveries()
REVOKE ALL ON FUNCTION chat_private.tg_webhook_endpoints__fail_pending_deliveries() FROM PUBLIC;

-- ACL chat_private FUNCTION tg_worker_config__bump()
REVOKE ALL ON FUNCTION chat_private.tg_worker_config__bump() FROM PUBLIC;

-- ACL chat_private FUNCTION transient_candidates(p_rule text, p_limit integer)
REVOKE ALL ON FUNCTION chat_private.transient_candidates(p_rule text, p_limit integer) FROM PUBLIC;

-- ACL chat_private FUNCTION turn_state(p_chat_id uuid)
GRANT ALL ON FUNCTION chat_private.turn_state(p_chat_id uuid) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.turn_state(p_chat_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_add(p_owner uuid, p_url text, p_events text[], p_secret text)
GRANT ALL ON FUNCTION chat_private.webhook_add(p_owner uuid, p_url text, p_events text[], p_secret text) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.webhook_add(p_owner uuid, p_url text, p_events text[], p_secret text) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_check_url(p_url text)
REVOKE ALL ON FUNCTION chat_private.webhook_check_url(p_url text) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_delivery_for_send(p_delivery_id bigint)
GRANT ALL ON FUNCTION chat_private.webhook_delivery_for_send(p_delivery_id bigint) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.webhook_delivery_for_send(p_delivery_id bigint) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_enqueue(p_owner uuid, p_event text, p_subject text, p_created_at timestamp with time zone)
REVOKE ALL ON FUNCTION chat_private.webhook_enqueue(p_owner uuid, p_event text, p_subject text, p_created_at timestamp with time zone) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_list(p_owner uuid)
GRANT ALL ON FUNCTION chat_private.webhook_list(p_owner uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.webhook_list(p_owner uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_own_endpoint(p_id uuid)
REVOKE ALL ON FUNCTION chat_private.webhook_own_endpoint(p_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_record_attempt(p_delivery_id bigint, p_status_code integer, p_error text, p_retry_after_seconds integer)
GRANT ALL ON FUNCTION chat_private.webhook_record_attempt(p_delivery_id bigint, p_status_code integer, p_error text, p_retry_after_seconds integer) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.webhook_record_attempt(p_delivery_id bigint, p_status_code integer, p_error text, p_retry_after_seconds integer) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_remove(p_endpoint uuid)
GRANT ALL ON FUNCTION chat_private.webhook_remove(p_endpoint uuid) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.webhook_remove(p_endpoint uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_replay(p_delivery_id bigint)
GRANT ALL ON FUNCTION chat_private.webhook_replay(p_delivery_id bigint) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.webhook_replay(p_delivery_id bigint) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_response_event(p_status chat_public.structured_output_status, p_code text)
REVOKE ALL ON FUNCTION chat_private.webhook_response_event(p_status chat_public.structured_output_status, p_code text) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_response_subject(p_request_id uuid)
REVOKE ALL ON FUNCTION chat_private.webhook_response_subject(p_request_id uuid) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_retry_delay(p_attempts integer)
REVOKE ALL ON FUNCTION chat_private.webhook_retry_delay(p_attempts integer) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_rotate(p_endpoint uuid, p_secret text, p_overlap interval)
GRANT ALL ON FUNCTION chat_private.webhook_rotate(p_endpoint uuid, p_secret text, p_overlap interval) TO chat_operator;
REVOKE ALL ON FUNCTION chat_private.webhook_rotate(p_endpoint uuid, p_secret text, p_overlap interval) FROM PUBLIC;

-- ACL chat_private FUNCTION webhook_sweep(p_stale interval)
GRANT ALL ON FUNCTION chat_private.webhook_sweep(p_stale interval) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.webhook_sweep(p_stale interval) FROM PUBLIC;

-- ACL chat_private FUNCTION worker_message_kind(p_item jsonb)
REVOKE ALL ON FUNCTION chat_private.worker_message_kind(p_item jsonb) FROM PUBLIC;

-- ACL chat_private FUNCTION worker_row_is_live(p_expires_at timestamp with time zone)
GRANT ALL ON FUNCTION chat_private.worker_row_is_live(p_expires_at timestamp with time zone) TO chat_operator;
GRANT ALL ON FUNCTION chat_private.worker_row_is_live(p_expires_at timestamp with time zone) TO chat_worker;
REVOKE ALL ON FUNCTION chat_private.worker_row_is_live(p_expires_at timestamp with time zone) FROM PUBLIC;

-- ACL chat_private FUNCTION write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb)
REVOKE ALL ON FUNCTION chat_private.write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) FROM PUBLIC;

-- ACL chat_private TABLE batch_progress
GRANT SELECT ON TABLE chat_private.batch_progress TO chat_operator;

-- ACL chat_private TABLE chat_leases
GRANT SELECT ON TABLE chat_private.chat_leases TO chat_operator;
GRANT SELECT ON TABLE chat_private.chat_leases TO chat_worker;

-- ACL chat_private TABLE deleted_requests
GRANT SELECT ON TABLE chat_private.deleted_requests TO chat_operator;

-- ACL chat_private TABLE experiments
GRANT SELECT ON TABLE chat_private.experiments TO chat_operator;
GRANT SELECT ON TABLE chat_private.experiments TO chat_worker;

-- ACL chat_private TABLE idempotency_keys
GRANT SELECT ON TABLE chat_private.idempotency_keys TO chat_operator;
GRANT SELECT ON TABLE chat_private.idempotency_keys TO chat_worker;

-- ACL chat_private TABLE job_queue
GRANT SELECT ON TABLE chat_private.job_queue TO chat_operator;

-- ACL chat_private TABLE lease_holders
GRANT SELECT ON TABLE chat_private.lease_holders TO chat_operator;

-- ACL chat_private TABLE mcp_server_secrets
GRANT SELECT ON TABLE chat_private.mcp_server_secrets TO chat_worker;

-- ACL chat_private TABLE mcp_servers
GRANT SELECT ON TABLE chat_private.mcp_servers TO chat_operator;
GRANT SELECT ON TABLE chat_private.mcp_servers TO chat_worker;

-- ACL chat_private TABLE message_internals
GRANT SELECT ON TABLE chat_private.message_internals TO chat_operator;
GRANT SELECT ON TABLE chat_private.message_internals TO chat_worker;

-- ACL chat_private TABLE model_config_secrets
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE chat_private.model_config_secrets TO chat_worker;

-- ACL chat_private TABLE model_configs
GRANT SELECT ON TABLE chat_private.model_configs TO chat_operator;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE chat_private.model_configs TO chat_worker;

-- ACL chat_private TABLE openai_response_rounds
GRANT SELECT ON TABLE chat_private.openai_response_rounds TO chat_operator;

-- ACL chat_private TABLE openai_responses
GRANT SELECT ON TABLE chat_private.openai_responses TO chat_operator;

-- ACL chat_private TABLE queue_depth
GRANT SELECT ON TABLE chat_private.queue_depth TO chat_operator;

-- ACL chat_private TABLE recent_failures
GRANT SELECT ON TABLE chat_private.recent_failures TO chat_operator;

-- ACL chat_private TABLE request_outcomes_hourly
GRANT SELECT ON TABLE chat_private.request_outcomes_hourly TO chat_operator;

-- ACL chat_private TABLE server_epoch
GRANT SELECT ON TABLE chat_private.server_epoch TO chat_operator;

-- ACL chat_private TABLE settings
GRANT SELECT ON TABLE chat_private.settings TO chat_operator;
GRANT SELECT ON TABLE chat_private.settings TO chat_worker;

-- ACL chat_private TABLE stop_hook_secrets
GRANT SELECT ON TABLE chat_private.stop_hook_secrets TO chat_worker;

-- ACL chat_private TABLE stop_hooks
GRANT SELECT ON TABLE chat_private.stop_hooks TO chat_operator;
GRANT SELECT ON TABLE chat_private.stop_hooks TO chat_worker;

-- ACL chat_private TABLE stuck_chats
GRANT SELECT ON TABLE chat_private.stuck_chats TO chat_operator;
GRANT SELECT ON TABLE chat_private.stuck_chats TO chat_worker;

-- ACL chat_private TABLE transition_rules
GRANT SELECT ON TABLE chat_private.transition_rules TO chat_operator;
GRANT SELECT ON TABLE chat_private.transition_rules TO chat_worker;

-- ACL chat_private TABLE turn_progress
GRANT SELECT ON TABLE chat_private.turn_progress TO chat_operator;
GRANT SELECT ON TABLE chat_private.turn_progress TO chat_worker;

-- ACL chat_private TABLE turns_at_recovery_bound
GRANT SELECT ON TABLE chat_private.turns_at_recovery_bound TO chat_operator;

-- ACL chat_private TABLE webhook_attempts
GRANT SELECT ON TABLE chat_private.webhook_attempts TO chat_operator;

-- ACL chat_private TABLE webhook_deliveries
GRANT SELECT ON TABLE chat_private.webhook_deliveries TO chat_operator;

-- ACL chat_private TABLE worker_config_version
GRANT SELECT ON TABLE chat_private.worker_config_version TO chat_operator;
GRANT SELECT ON TABLE chat_private.worker_config_version TO chat_worker;

-- ACL chat_private TABLE worker_processes
GRANT SELECT ON TABLE chat_private.worker_processes TO chat_operator;

-- ACL chat_public COLUMN users.name
GRANT INSERT(name) ON TABLE chat_public.users TO chat_operator;

-- ACL chat_public FUNCTION add_webhook_endpoint(url text, events text[])
GRANT ALL ON FUNCTION chat_public.add_webhook_endpoint(url text, events text[]) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.add_webhook_endpoint(url text, events text[]) FROM PUBLIC;

-- ACL chat_public FUNCTION archive_chat(chat_id uuid, archived boolean)
GRANT ALL ON FUNCTION chat_public.archive_chat(chat_id uuid, archived boolean) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.archive_chat(chat_id uuid, archived boolean) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.archive_chat(chat_id uuid, archived boolean) FROM PUBLIC;

-- ACL chat_public FUNCTION batches_item_counts(b chat_public.batches)
GRANT ALL ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) TO chat_user;
GRANT ALL ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) TO chat_worker;
REVOKE ALL ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) FROM PUBLIC;

-- ACL chat_public FUNCTION cancel_batch(batch_id uuid)
GRANT ALL ON FUNCTION chat_public.cancel_batch(batch_id uuid) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.cancel_batch(batch_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.cancel_batch(batch_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_input_result_chat(r chat_public.chat_input_result)
GRANT ALL ON FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_input_result_message(r chat_public.chat_input_result)
GRANT ALL ON FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_input_result_queued_message(r chat_public.chat_input_result)
GRANT ALL ON FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_input_result_receipts(r chat_public.chat_input_result)
GRANT ALL ON FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_input_result_structured_output_request(r chat_public.chat_input_result)
GRANT ALL ON FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) FROM PUBLIC;

-- ACL chat_public FUNCTION chat_messages_structured_output(m chat_public.chat_messages)
GRANT ALL ON FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) FROM PUBLIC;

-- ACL chat_public FUNCTION chats_messages(c chat_public.chats, after_id bigint, before_id bigint)
GRANT ALL ON FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint, before_id bigint) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint, before_id bigint) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint, before_id bigint) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint, before_id bigint) FROM PUBLIC;

-- ACL chat_public FUNCTION chats_pending_structured_requests(c chat_public.chats)
GRANT ALL ON FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) FROM PUBLIC;

-- ACL chat_public FUNCTION chats_queue(c chat_public.chats)
GRANT ALL ON FUNCTION chat_public.chats_queue(c chat_public.chats) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.chats_queue(c chat_public.chats) TO chat_operator;
GRANT ALL ON FUNCTION chat_public.chats_queue(c chat_public.chats) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.chats_queue(c chat_public.chats) FROM PUBLIC;

-- ACL chat_public FUNCTION compact_chat(chat_id uuid)
GRANT ALL ON FUNCTION chat_public.compact_chat(chat_id uuid) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.compact_chat(chat_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.compact_chat(chat_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text)
GRANT ALL ON FUNCTION chat_public.create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text)
GRANT ALL ON FUNCTION chat_public.create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION current_user_id()
GRANT ALL ON FUNCTION chat_public.current_user_id() TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.current_user_id() TO chat_operator;
GRANT ALL ON FUNCTION chat_public.current_user_id() TO chat_user;
GRANT ALL ON FUNCTION chat_public.current_user_id() TO chat_worker;
REVOKE ALL ON FUNCTION chat_public.current_user_id() FROM PUBLIC;

-- ACL chat_public FUNCTION delete_chat(chat_id uuid)
GRANT ALL ON FUNCTION chat_public.delete_chat(chat_id uuid) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.delete_chat(chat_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.delete_chat(chat_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION delete_queued_message(queued_message_id bigint)
GRANT ALL ON FUNCTION chat_public.delete_queued_message(queued_message_id bigint) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.delete_queued_message(queued_message_id bigint) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.delete_queued_message(queued_message_id bigint) FROM PUBLIC;

-- ACL chat_public FUNCTION edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint)
GRANT ALL ON FUNCTION chat_public.edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint) FROM PUBLIC;

-- ACL chat_public FUNCTION edit_message(message_id bigint, content jsonb, response_format text)
GRANT ALL ON FUNCTION chat_public.edit_message(message_id bigint, content jsonb, response_format text) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.edit_message(message_id bigint, content jsonb, response_format text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.edit_message(message_id bigint, content jsonb, response_format text) FROM PUBLIC;

-- ACL chat_public FUNCTION find_structured_output_request(request_id uuid)
GRANT ALL ON FUNCTION chat_public.find_structured_output_request(request_id uuid) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.find_structured_output_request(request_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.find_structured_output_request(request_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION interrupt_chat(chat_id uuid)
GRANT ALL ON FUNCTION chat_public.interrupt_chat(chat_id uuid) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.interrupt_chat(chat_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.interrupt_chat(chat_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION openai_cancel_response(p_id uuid)
GRANT ALL ON FUNCTION chat_public.openai_cancel_response(p_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.openai_cancel_response(p_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
GRANT ALL ON FUNCTION chat_public.openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
GRANT ALL ON FUNCTION chat_public.openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
GRANT ALL ON FUNCTION chat_public.openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION openai_response(p_id uuid)
GRANT ALL ON FUNCTION chat_public.openai_response(p_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.openai_response(p_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION promote_queued_message(queued_message_id bigint)
GRANT ALL ON FUNCTION chat_public.promote_queued_message(queued_message_id bigint) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.promote_queued_message(queued_message_id bigint) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.promote_queued_message(queued_message_id bigint) FROM PUBLIC;

-- ACL chat_public FUNCTION remove_webhook_endpoint(endpoint_id uuid)
GRANT ALL ON FUNCTION chat_public.remove_webhook_endpoint(endpoint_id uuid) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.remove_webhook_endpoint(endpoint_id uuid) FROM PUBLIC;

-- ACL chat_public FUNCTION rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer)
GRANT ALL ON FUNCTION chat_public.rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer) FROM PUBLIC;

-- ACL chat_public FUNCTION send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text)
GRANT ALL ON FUNCTION chat_public.send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text)
GRANT ALL ON FUNCTION chat_public.send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text) FROM PUBLIC;

-- ACL chat_public FUNCTION set_chat_mcp_servers(chat_id uuid, server_ids text[])
GRANT ALL ON FUNCTION chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) FROM PUBLIC;

-- ACL chat_public FUNCTION set_chat_plan_mode(chat_id uuid, enabled boolean)
GRANT ALL ON FUNCTION chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) FROM PUBLIC;

-- ACL chat_public FUNCTION structured_output_enabled()
GRANT ALL ON FUNCTION chat_public.structured_output_enabled() TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.structured_output_enabled() TO chat_operator;
GRANT ALL ON FUNCTION chat_public.structured_output_enabled() TO chat_user;
REVOKE ALL ON FUNCTION chat_public.structured_output_enabled() FROM PUBLIC;

-- ACL chat_public FUNCTION submit_tool_results(chat_id uuid, results jsonb)
GRANT ALL ON FUNCTION chat_public.submit_tool_results(chat_id uuid, results jsonb) TO chat_anonymous;
GRANT ALL ON FUNCTION chat_public.submit_tool_results(chat_id uuid, results jsonb) TO chat_user;
REVOKE ALL ON FUNCTION chat_public.submit_tool_results(chat_id uuid, results jsonb) FROM PUBLIC;

-- ACL chat_public FUNCTION webhook_endpoints()
GRANT ALL ON FUNCTION chat_public.webhook_endpoints() TO chat_user;
REVOKE ALL ON FUNCTION chat_public.webhook_endpoints() FROM PUBLIC;

-- ACL chat_public TABLE batch_items
GRANT SELECT ON TABLE chat_public.batch_items TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.batch_items TO chat_operator;
GRANT SELECT ON TABLE chat_public.batch_items TO chat_user;
GRANT SELECT ON TABLE chat_public.batch_items TO chat_worker;

-- ACL chat_public TABLE batches
GRANT SELECT ON TABLE chat_public.batches TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.batches TO chat_operator;
GRANT SELECT ON TABLE chat_public.batches TO chat_user;
GRANT SELECT ON TABLE chat_public.batches TO chat_worker;

-- ACL chat_public TABLE chat_messages
GRANT SELECT ON TABLE chat_public.chat_messages TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.chat_messages TO chat_operator;
GRANT SELECT ON TABLE chat_public.chat_messages TO chat_user;
GRANT SELECT ON TABLE chat_public.chat_messages TO chat_worker;

-- ACL chat_public TABLE chat_queued_messages
GRANT SELECT ON TABLE chat_public.chat_queued_messages TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.chat_queued_messages TO chat_operator;
GRANT SELECT ON TABLE chat_public.chat_queued_messages TO chat_user;
GRANT SELECT ON TABLE chat_public.chat_queued_messages TO chat_worker;

-- ACL chat_public TABLE chats
GRANT SELECT ON TABLE chat_public.chats TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.chats TO chat_operator;
GRANT SELECT ON TABLE chat_public.chats TO chat_user;
GRANT SELECT ON TABLE chat_public.chats TO chat_worker;

-- ACL chat_public TABLE structured_output_requests
GRANT SELECT ON TABLE chat_public.structured_output_requests TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.structured_output_requests TO chat_operator;
GRANT SELECT ON TABLE chat_public.structured_output_requests TO chat_user;
GRANT SELECT ON TABLE chat_public.structured_output_requests TO chat_worker;

-- ACL chat_public TABLE users
GRANT SELECT ON TABLE chat_public.users TO chat_anonymous;
GRANT SELECT ON TABLE chat_public.users TO chat_operator;
GRANT SELECT ON TABLE chat_public.users TO chat_user;
GRANT SELECT ON TABLE chat_public.users TO chat_worker;

-- CHECK CONSTRAINT chat_public structured_output_requests structured_output_requests_provenance
ALTER TABLE chat_public.structured_output_requests
    ADD CONSTRAINT structured_output_requests_provenance CHECK (((status = 'pending'::chat_public.structured_output_status) OR ((finalization_attempts IS NOT NULL) AND (model_steps IS NOT NULL)))) NOT VALID;

-- COMMENT - SCHEMA chat_private
COMMENT ON SCHEMA chat_private IS 'Internal state (secrets, leases, turn progress, replay data); never exposed to clients.';

-- COMMENT - SCHEMA chat_public
COMMENT ON SCHEMA chat_public IS 'Everything a chatd client may see, exposed through GraphQL under row-level security.';

-- COMMENT chat_private COLUMN transition_rules.allowed
COMMENT ON COLUMN chat_private.transition_rules.allowed IS 'Whether the transition may run from from_state: derived, true exactly when to_state is not empty.';

-- COMMENT chat_private COLUMN transition_rules.note
COMMENT ON COLUMN chat_private.transition_rules.note IS 'What the transition does from this state, in words.';

-- COMMENT chat_private COLUMN transition_rules.to_state
COMMENT ON COLUMN chat_private.transition_rules.to_state IS 'The states the chat can be in after the transition, the usual one first; empty when it is refused.';

-- COMMENT chat_private FUNCTION _delete_chats(p_chat_ids uuid[])
COMMENT ON FUNCTION chat_private._delete_chats(p_chat_ids uuid[]) IS 'Deletes chats and their subagent children with everything that names them, in the caller''s transaction; returns counts of what went.';

-- COMMENT chat_private FUNCTION _server_epoch()
COMMENT ON FUNCTION chat_private._server_epoch() IS 'The server epoch (system identifier/timeline/postmaster start); records a new one with when it was first seen.';

-- COMMENT chat_private FUNCTION acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer)
COMMENT ON FUNCTION chat_private.acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer) IS 'Takes the runner lease of a runnable chat with a fresh runner id and starts a new generation attempt. CHLSD when a live lease exists, CHTRN when the chat is not runnable.';

-- COMMENT chat_private FUNCTION commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_deltas text[])
COMMENT ON FUNCTION chat_private.commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_deltas text[]) IS 'Commits one step of the running turn (assistant output, tool results, control rows), its progress counters and its last part deltas; returns the new fence.';

-- COMMENT chat_private FUNCTION commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb, p_deltas text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status)
COMMENT ON FUNCTION chat_private.commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb, p_deltas text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status) IS 'commit_step then, when no stop hook is enabled, finish_turn with the new fence, in one transaction. Returns the new fence and the new status (null: the step is committed, the turn is not finished).';

-- COMMENT chat_private FUNCTION compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb)
COMMENT ON FUNCTION chat_private.compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb) IS 'Worker: replaces the history up to a message by a model-only summary in future prompts (originals marked compressed, receipts untouched, the open turn''s input carried over), inserts a client-visible marker. Fenced; returns the new fence.';

-- COMMENT chat_private FUNCTION dispatch_batch(p_batch_id uuid)
COMMENT ON FUNCTION chat_private.dispatch_batch(p_batch_id uuid) IS 'Starts pending items of a running batch in line order into its free slots (up to its concurrency), and completes the batch when no item is pending or running. Called when validation passes, by the worker''s sweep and by operators; safe to call at any time.';

-- COMMENT chat_private FUNCTION enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer)
COMMENT ON FUNCTION chat_private.enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer) IS 'Pauses the turn for client-executed tools: the lease is released (no worker slot is held) and a deadline job is scheduled.';

-- COMMENT chat_private FUNCTION finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text)
COMMENT ON FUNCTION chat_private.finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text) IS 'Infrastructure failure: the active request fails with generation_failed, the chat enters error; queued structured requests get failed receipts (generation_failed), other queued inputs wait.';

-- COMMENT chat_private FUNCTION finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb)
COMMENT ON FUNCTION chat_private.finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb) IS 'Ends an interrupted turn: partial output first, then the `interrupted` receipt, then the queue head is promoted.';

-- COMMENT chat_private FUNCTION finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb)
COMMENT ON FUNCTION chat_private.finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb) IS 'Ends the turn: the structured request''s receipt (success from the durable candidate, or the given failure), then the queue head is promoted. Returns the new status.';

-- COMMENT chat_private FUNCTION operator_cancel_batch(p_batch_id uuid, p_reason text)
COMMENT ON FUNCTION chat_private.operator_cancel_batch(p_batch_id uuid, p_reason text) IS 'Operator repair: cancels any user''s batch with a reason (pending items canceled, running ones interrupted).';

-- COMMENT chat_private FUNCTION operator_cancel_request(p_request_id uuid, p_reason text)
COMMENT ON FUNCTION chat_private.operator_cancel_request(p_request_id uuid, p_reason text) IS 'Operator repair: cancels a pending structured request with an operator_canceled receipt whose message is the reason. Returns the receipt message id; SODON if it already finished.';

-- COMMENT chat_private FUNCTION operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text)
COMMENT ON FUNCTION chat_private.operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text) IS 'Operator: submits a batch on behalf of a user (same rules as chat_public.create_batch; the schema is validated by the worker before any item starts).';

-- COMMENT chat_private FUNCTION operator_delete_chat(p_chat_id uuid)
COMMENT ON FUNCTION chat_private.operator_delete_chat(p_chat_id uuid) IS 'Operator: deletes a chat of any owner with its subagent chats and everything that names them; returns counts of what went.';

-- COMMENT chat_private FUNCTION operator_delete_user(p_user_id uuid)
COMMENT ON FUNCTION chat_private.operator_delete_user(p_user_id uuid) IS 'Operator: deletes a user with every chat, batch, idempotency key, deleted-request id and webhook endpoint (with its secrets and deliveries) of theirs; their tokens are refused from the commit on. Returns counts of what went.';

-- COMMENT chat_private FUNCTION operator_release_lease(p_chat_id uuid)
COMMENT ON FUNCTION chat_private.operator_release_lease(p_chat_id uuid) IS 'Operator repair: releases the chat''s runner lease and re-enqueues the chat. Returns whether a lease existed.';

-- COMMENT chat_private FUNCTION operator_retry_chat(p_chat_id uuid)
COMMENT ON FUNCTION chat_private.operator_retry_chat(p_chat_id uuid) IS 'Operator repair: resumes a chat in error: the queue head runs next, else the last user input runs again as a new turn. Queued structured requests already have failed receipts (generation_failed) from when the chat entered error.';

-- COMMENT chat_private FUNCTION record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb)
COMMENT ON FUNCTION chat_private.record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb) IS 'Worker: publishes (or clears) the provider retry state of the running step in chats.retry_state; a new state starts a new generation attempt. Returns the new fence.';

-- COMMENT chat_private FUNCTION renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[])
COMMENT ON FUNCTION chat_private.renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[]) IS 'Renews the leases of a worker process''s runs in one statement and returns each chat''s status: renewed is false when the runner lost its lease, null when its row was busy (try again).';

-- COMMENT chat_private FUNCTION report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric)
COMMENT ON FUNCTION chat_private.report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric) IS 'A worker process is alive until p_ttl_seconds from now; the jobs it locked count as running until then.';

-- COMMENT chat_private FUNCTION response_format_errors(p_format jsonb)
COMMENT ON FUNCTION chat_private.response_format_errors(p_format jsonb) IS 'Envelope errors of a response_format value, as (field, detail) rows; no rows when the envelope is acceptable.';

-- COMMENT chat_private FUNCTION retention_due()
COMMENT ON FUNCTION chat_private.retention_due() IS 'Per retention rule: its setting in days (0: off) and how many chats, batches, deleted-request ids, idempotency keys, webhook deliveries or failed jobs it would delete now.';

-- COMMENT chat_private FUNCTION run_retention()
COMMENT ON FUNCTION chat_private.run_retention() IS 'One retention step (the worker''s data_retention task calls it until nothing is due): deletes up to retention_batch_size due chats, or chats of the oldest due batch, expired deleted-request ids, and expired idempotency keys, finished webhook deliveries and permanently failed jobs. Skips rows a client holds.';

-- COMMENT chat_private FUNCTION service_gauges()
COMMENT ON FUNCTION chat_private.service_gauges() IS 'The counts behind the database gauges of /metrics (receipts, pending requests, turns, job queue, chat queues, lease recoveries, stuck chats, batches), as one JSON object.';

-- COMMENT chat_private FUNCTION spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text)
COMMENT ON FUNCTION chat_private.spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text) IS 'Subagents: creates a child chat (depth 1) for the runner holding the parent''s lease. The child never inherits a response format.';

-- COMMENT chat_private FUNCTION sweep_expired_leases()
COMMENT ON FUNCTION chat_private.sweep_expired_leases() IS 'Re-enqueues runnable chats without a live lease (at once when the worker that fetched their job is dead); counts recoveries per turn and fails turns past the bound.';

-- COMMENT chat_private FUNCTION turn_state(p_chat_id uuid)
COMMENT ON FUNCTION chat_private.turn_state(p_chat_id uuid) IS 'What the worker''s next step needs, in one snapshot: the chat, its open turn, the model-visible history from the newest live summary, whether compaction is due, and the worker config version.';

-- COMMENT chat_private TABLE mcp_server_secrets
COMMENT ON TABLE chat_private.mcp_server_secrets IS 'Environment (stdio) and headers (http) for MCP servers; not readable by chat_operator.';

-- COMMENT chat_private TABLE mcp_servers
COMMENT ON TABLE chat_private.mcp_servers IS 'Operator-configured MCP servers (stdio: command + args; http: streamable-HTTP url). Tools are offered as mcp__<id>__<tool>.';

-- COMMENT chat_private TABLE server_epoch
COMMENT ON TABLE chat_private.server_epoch IS 'The database server epoch (system identifier, timeline, postmaster start) the lease sweep last saw, and when.';

-- COMMENT chat_private TABLE stop_hook_secrets
COMMENT ON TABLE chat_private.stop_hook_secrets IS 'HMAC-SHA256 signing secrets of the stop hooks. Readable by the worker only, never by chat_operator.';

-- COMMENT chat_private TABLE stop_hooks
COMMENT ON TABLE chat_private.stop_hooks IS 'Stop hooks: HTTP webhooks called (POST, signed with the secret in stop_hook_secrets) when a turn is about to finish. An answer with a non-blank `model_context` continues the turn once per user request; failures and timeouts fail the turn closed (kind hook_failed).';

-- COMMENT chat_private TABLE worker_config_version
COMMENT ON TABLE chat_private.worker_config_version IS 'Bumped by every change of settings, model configs, stop hooks and their secrets: the worker''s per-process caches of those rows are valid while their version is current.';

-- COMMENT chat_private TABLE worker_processes
COMMENT ON TABLE chat_private.worker_processes IS 'Live worker processes: queue_id is Graphile Worker''s locked_by for the jobs the process fetches, worker_id is chatd''s (host:pid:suffix, as in lease_holders). A row whose expires_at passed belongs to a process that stopped reporting (killed).';

-- COMMENT chat_private VIEW batch_progress
COMMENT ON VIEW chat_private.batch_progress IS 'Every batch with its items by status, throughput since it started (items that ran per second) and an ETA for running batches. Order by created_at desc; filter on status for the active ones.';

-- COMMENT chat_private VIEW job_queue
COMMENT ON VIEW chat_private.job_queue IS 'Graphile Worker jobs by task, each counted once: waiting (due now), scheduled (later, e.g. requires_action deadlines), running (locked by a live worker), locked_by_dead_worker (its worker stopped reporting: the sweep re-enqueues the chat and removes the job), failed_permanently (out of attempts, not locked) and since when the oldest due job waits. Counts only; it reads the queue with its owner''s rights because chat_operator has none on graphile_worker.';

-- COMMENT chat_private VIEW lease_holders
COMMENT ON VIEW chat_private.lease_holders IS 'Every runner lease: which worker process (worker_id: host:pid:suffix) holds which chat, until when, and whether it is still live.';

-- COMMENT chat_private VIEW queue_depth
COMMENT ON VIEW chat_private.queue_depth IS 'Queued inputs per chat: how many, how many carry a structured request, and the age of the oldest. A chat in error keeps its plain queued inputs until the client (or chat_private.operator_retry_chat) resumes it; its queued structured requests got failed receipts when it entered error.';

-- COMMENT chat_private VIEW recent_failures
COMMENT ON VIEW chat_private.recent_failures IS 'Failed structured requests and chats in error, with their sanitized reasons (never provider bodies or schema values). Order by `at` desc.';

-- COMMENT chat_private VIEW request_outcomes_hourly
COMMENT ON VIEW chat_private.request_outcomes_hourly IS 'Structured output requests per hour (of their receipt, or of their creation while pending), by status, error code and the model that produced the receipt (model_config_id, provider, model: null while pending and for receipts written before provenance was recorded), with their attempts, steps and tokens summed and the mean time from the turn''s start to the receipt. Sum over the model columns for outcomes alone.';

-- COMMENT chat_private VIEW stuck_chats
COMMENT ON VIEW chat_private.stuck_chats IS 'Runnable chats (running, interrupting) without a live lease. The worker''s sweep re-enqueues them every few seconds; a row that stays here means no worker is running. Columns: lease_expired_at is null when no lease was ever taken for the current run; stuck_for counts from the lease expiry or the last change; recoveries is the open turn''s count of expired leases.';

-- COMMENT chat_private VIEW turns_at_recovery_bound
COMMENT ON VIEW chat_private.turns_at_recovery_bound IS 'Turns whose worker crashed (lease expired) as often as max_recoveries_per_turn allows, or more: the next crash, or the one that already happened, failed them with generation_failed.';

-- COMMENT chat_public COLUMN batch_items.line
COMMENT ON COLUMN chat_public.batch_items.line IS 'The line number in the submitted input (1-based).';

-- COMMENT chat_public COLUMN batch_items.slot
COMMENT ON COLUMN chat_public.batch_items.slot IS 'The concurrency slot (1 to the batch''s concurrency) a running item holds; at most one running item per slot.';

-- COMMENT chat_public COLUMN batches.concurrency
COMMENT ON COLUMN chat_public.batches.concurrency IS 'At most this many items run at once.';

-- COMMENT chat_public COLUMN batches.response_format
COMMENT ON COLUMN chat_public.batches.response_format IS 'The json_schema envelope {name, description?, schema} every item uses.';

-- COMMENT chat_public COLUMN chat_messages.content
COMMENT ON COLUMN chat_public.chat_messages.content IS 'Parts: text, reasoning, tool-call, tool-result, file, source.';

-- COMMENT chat_public COLUMN chat_messages.deleted
COMMENT ON COLUMN chat_public.chat_messages.deleted IS 'Discarded by an edit. Receipts stay readable.';

-- COMMENT chat_public COLUMN chat_messages.kind
COMMENT ON COLUMN chat_public.chat_messages.kind IS '@behavior +filterBy';

-- COMMENT chat_public COLUMN chat_messages.revision
COMMENT ON COLUMN chat_public.chat_messages.revision IS 'The chat''s snapshot_version when the row was last written (set by the database).';

-- COMMENT chat_public COLUMN chat_messages.structured_output
COMMENT ON COLUMN chat_public.chat_messages.structured_output IS '@behavior -*';

-- COMMENT chat_public COLUMN chat_messages.structured_output_request_id
COMMENT ON COLUMN chat_public.chat_messages.structured_output_request_id IS 'The structured output request this input started, or that this receipt ends.';

-- COMMENT chat_public COLUMN chats.compaction_requested_at
COMMENT ON COLUMN chat_public.chats.compaction_requested_at IS 'Set by compactChat; cleared when the worker has compacted the history.';

-- COMMENT chat_public COLUMN chats.generation_attempt
COMMENT ON COLUMN chat_public.chats.generation_attempt IS 'Generation attempts since the last history change.';

-- COMMENT chat_public COLUMN chats.history_version
COMMENT ON COLUMN chat_public.chats.history_version IS 'The snapshot_version of the latest history change (receipts excepted).';

-- COMMENT chat_public COLUMN chats.mcp_server_ids
COMMENT ON COLUMN chat_public.chats.mcp_server_ids IS 'The MCP servers this chat uses (ids of operator-configured servers).';

-- COMMENT chat_public COLUMN chats.pending_tool_calls
COMMENT ON COLUMN chat_public.chats.pending_tool_calls IS 'The client-executed tool calls the chat waits on, as [{tool_call_id, tool_name}].';

-- COMMENT chat_public COLUMN chats.queue_version
COMMENT ON COLUMN chat_public.chats.queue_version IS 'The snapshot_version of the latest queue change.';

-- COMMENT chat_public COLUMN chats.snapshot_version
COMMENT ON COLUMN chat_public.chats.snapshot_version IS 'Bumped once by every transition.';

-- COMMENT chat_public COLUMN structured_output.provenance
COMMENT ON COLUMN chat_public.structured_output.provenance IS 'How the receipt came about (the request''s finalization attempts, model steps, model, tokens, times, schema hash).';

-- COMMENT chat_public COLUMN structured_output_requests.finalization_attempts
COMMENT ON COLUMN chat_public.structured_output_requests.finalization_attempts IS 'Assistant batches judged against the request: rejected ones (a text-only answer, a bad finalizer call, an invalid value) and accepted candidates (also one a stop hook discarded). Null while pending.';

-- COMMENT chat_public COLUMN structured_output_requests.input_tokens
COMMENT ON COLUMN chat_public.structured_output_requests.input_tokens IS 'Input tokens summed over the turn''s model calls that reported usage; null when none did.';

-- COMMENT chat_public COLUMN structured_output_requests.model
COMMENT ON COLUMN chat_public.structured_output_requests.model IS 'That model config''s model id.';

-- COMMENT chat_public COLUMN structured_output_requests.model_config_id
COMMENT ON COLUMN chat_public.structured_output_requests.model_config_id IS 'The chat''s model config when the receipt was written.';

-- COMMENT chat_public COLUMN structured_output_requests.model_steps
COMMENT ON COLUMN chat_public.structured_output_requests.model_steps IS 'Model steps of the request''s turn. Null while pending.';

-- COMMENT chat_public COLUMN structured_output_requests.output_tokens
COMMENT ON COLUMN chat_public.structured_output_requests.output_tokens IS 'Output tokens summed over the turn''s model calls that reported usage; null when none did.';

-- COMMENT chat_public COLUMN structured_output_requests.provider
COMMENT ON COLUMN chat_public.structured_output_requests.provider IS 'That model config''s provider.';

-- COMMENT chat_public COLUMN structured_output_requests.schema_sha256
COMMENT ON COLUMN chat_public.structured_output_requests.schema_sha256 IS 'SHA-256 (hex) of `schema::text`.';

-- COMMENT chat_public COLUMN structured_output_requests.started_at
COMMENT ON COLUMN chat_public.structured_output_requests.started_at IS 'When the request''s turn started; null for a request that never ran (deleted from the queue, superseded while queued).';

-- COMMENT chat_public FUNCTION add_webhook_endpoint(url text, events text[])
COMMENT ON FUNCTION chat_public.add_webhook_endpoint(url text, events text[]) IS 'Adds a completion webhook endpoint for the caller. `events` default to the four response.* events. The answer carries the signing secret, shown only here.';

-- COMMENT chat_public FUNCTION archive_chat(chat_id uuid, archived boolean)
COMMENT ON FUNCTION chat_public.archive_chat(chat_id uuid, archived boolean) IS 'Archives an idle chat (waiting or error), or unarchives it with `archived` false.';

-- COMMENT chat_public FUNCTION batches_item_counts(b chat_public.batches)
COMMENT ON FUNCTION chat_public.batches_item_counts(b chat_public.batches) IS 'The batch''s items by status (computed on read, never a stored counter).';

-- COMMENT chat_public FUNCTION cancel_batch(batch_id uuid)
COMMENT ON FUNCTION chat_public.cancel_batch(batch_id uuid) IS 'Cancels a batch: pending items never start; running items are interrupted and end with `operator_canceled` receipts. Canceling a canceled batch returns it; a finished one is refused.';

-- COMMENT chat_public FUNCTION chat_input_result_chat(r chat_public.chat_input_result)
COMMENT ON FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) IS '@behavior -queryField
The chat.';

-- COMMENT chat_public FUNCTION chat_input_result_message(r chat_public.chat_input_result)
COMMENT ON FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) IS '@behavior -queryField
The message that started a turn, when the input started one.';

-- COMMENT chat_public FUNCTION chat_input_result_queued_message(r chat_public.chat_input_result)
COMMENT ON FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) IS '@behavior -queryField
The queued message, while it waits in the queue.';

-- COMMENT chat_public FUNCTION chat_input_result_receipts(r chat_public.chat_input_result)
COMMENT ON FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) IS '@behavior -queryField
Receipts the input committed (edit supersession, queue deletion), in id order.';

-- COMMENT chat_public FUNCTION chat_input_result_structured_output_request(r chat_public.chat_input_result)
COMMENT ON FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) IS '@behavior -queryField
The structured output request the input created (or, for a deleted queued message, ended).';

-- COMMENT chat_public FUNCTION chat_messages_structured_output(m chat_public.chat_messages)
COMMENT ON FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) IS 'The result this receipt carries; null on every other message (only receipts carry results).';

-- COMMENT chat_public FUNCTION chats_messages(c chat_public.chats, after_id bigint, before_id bigint)
COMMENT ON FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint, before_id bigint) IS '@behavior +filter
The transcript in `rowId` order. `afterId`/`beforeId` are message `rowId`s (the stream cursor); page backwards with `beforeId` and `last`. `condition: {kind: RECEIPT}` reads only the receipts.';

-- COMMENT chat_public FUNCTION chats_pending_structured_requests(c chat_public.chats)
COMMENT ON FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) IS '@notNull
How many of the chat''s structured requests have no receipt yet.';

-- COMMENT chat_public FUNCTION chats_queue(c chat_public.chats)
COMMENT ON FUNCTION chat_public.chats_queue(c chat_public.chats) IS 'Queued inputs in the order they will run.';

-- COMMENT chat_public FUNCTION compact_chat(chat_id uuid)
COMMENT ON FUNCTION chat_public.compact_chat(chat_id uuid) IS 'Asks for the chat''s history to be compacted: before its next model step the worker summarizes the older history, which future prompts replace by the summary. Originals stay in the transcript, marked `compressed`; receipts are untouched.';

-- COMMENT chat_public FUNCTION create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text)
COMMENT ON FUNCTION chat_public.create_batch(response_format text, items jsonb, name text, model_config_id text, workspace text, concurrency integer, idempotency_key text) IS 'Submits a batch of structured requests sharing one response format. `responseFormat` is the JSON text of a json_schema envelope; `items` is [{line, content}] (content: text parts, as for createChat) or [{line, error}] for lines the client found invalid (they fail alone). The batch validates its schema before any item starts, then runs at most `concurrency` items at once, each as its own chat. A repeated `idempotencyKey` returns the first batch.';

-- COMMENT chat_public FUNCTION create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text)
COMMENT ON FUNCTION chat_public.create_chat(content jsonb, response_format text, model_config_id text, title text, workspace text, dynamic_tools jsonb, plan_mode boolean, idempotency_key text) IS 'Creates a chat whose first message starts a turn. `response_format` is the JSON text of {"type":"json_schema","json_schema":{"name","description","schema"}} (or {"type":"text"}); a structured request gets a server-minted id. A repeated `idempotency_key` returns the first result.';

-- COMMENT chat_public FUNCTION current_user_id()
COMMENT ON FUNCTION chat_public.current_user_id() IS 'The id of the user making the request (the `sub` claim of the JWT), or null for anonymous requests.';

-- COMMENT chat_public FUNCTION delete_chat(chat_id uuid)
COMMENT ON FUNCTION chat_public.delete_chat(chat_id uuid) IS 'Deletes the chat for good: its messages, receipts, queue, structured requests and subagent chats. A running turn is stopped first. Polling a deleted chat''s structured request (findStructuredOutputRequest) answers REQUEST_DELETED. Returns the deleted chat''s id.';

-- COMMENT chat_public FUNCTION delete_queued_message(queued_message_id bigint)
COMMENT ON FUNCTION chat_public.delete_queued_message(queued_message_id bigint) IS 'Removes a queued message. A queued structured request ends at once with a `queue_deleted` receipt; a running turn is not disturbed.';

-- COMMENT chat_public FUNCTION edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint)
COMMENT ON FUNCTION chat_public.edit_chat_message(message_id bigint, content jsonb, response_format text, preserve_schema_sha256 text, preserve_history_version bigint) IS '@name edit_chat_message_checked
@behavior -*
Replaces a user message: later history and the queue are discarded, pending structured requests among them get `superseded` receipts (listed in id order), and the replacement starts a turn. `response_format` omitted or null keeps the edited message''s format under a fresh request id, {"type":"text"} clears it, a json_schema replaces it.';

-- COMMENT chat_public FUNCTION edit_message(message_id bigint, content jsonb, response_format text)
COMMENT ON FUNCTION chat_public.edit_message(message_id bigint, content jsonb, response_format text) IS '@name edit_chat_message
Replaces a user message: later history and the queue are discarded, pending structured requests among them get `superseded` receipts, and the replacement starts a turn. `responseFormat` omitted or null keeps the edited message''s format (validated again, under a fresh request id), {"type":"text"} clears it, a json_schema replaces it.';

-- COMMENT chat_public FUNCTION find_structured_output_request(request_id uuid)
COMMENT ON FUNCTION chat_public.find_structured_output_request(request_id uuid) IS 'One of your structured output requests by id. Errors: NOT_FOUND when there is none of yours with that id; REQUEST_DELETED when its chat was deleted (kept for the deleted_request_days setting).';

-- COMMENT chat_public FUNCTION interrupt_chat(chat_id uuid)
COMMENT ON FUNCTION chat_public.interrupt_chat(chat_id uuid) IS 'Stops the running step (the turn ends; a structured request gets an `interrupted` receipt). While the chat waits for client tool results, the pending calls are cancelled instead and the turn continues. The running turns of the chat''s subagents are interrupted too.';

-- COMMENT chat_public FUNCTION openai_cancel_response(p_id uuid)
COMMENT ON FUNCTION chat_public.openai_cancel_response(p_id uuid) IS '@behavior -*
Cancels a Response for /v1/responses/{id}/cancel (idempotent; a finished one stays as it is).';

-- COMMENT chat_public FUNCTION openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
COMMENT ON FUNCTION chat_public.openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) IS '@behavior -*
Answers the function calls of a Response with function_call_output items for /v1/responses (previous_response_id).';

-- COMMENT chat_public FUNCTION openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
COMMENT ON FUNCTION chat_public.openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) IS '@behavior -*
Creates an OpenAI Response (a chat whose first message carries a structured request) for /v1/responses.';

-- COMMENT chat_public FUNCTION openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text)
COMMENT ON FUNCTION chat_public.openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) IS '@behavior -*
Sends new input after a finished Response, in its chat, for /v1/responses (previous_response_id).';

-- COMMENT chat_public FUNCTION openai_response(p_id uuid)
COMMENT ON FUNCTION chat_public.openai_response(p_id uuid) IS '@behavior -*
Reads one Response for /v1/responses/{id} (the caller''s requests only).';

-- COMMENT chat_public FUNCTION promote_queued_message(queued_message_id bigint)
COMMENT ON FUNCTION chat_public.promote_queued_message(queued_message_id bigint) IS 'Runs a queued message next: an idle chat starts it at once; a running turn is interrupted and the message moves to the head of the queue.';

-- COMMENT chat_public FUNCTION remove_webhook_endpoint(endpoint_id uuid)
COMMENT ON FUNCTION chat_public.remove_webhook_endpoint(endpoint_id uuid) IS 'Removes one of the caller''s webhook endpoints with its delivery log. Returns its id.';

-- COMMENT chat_public FUNCTION rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer)
COMMENT ON FUNCTION chat_public.rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer) IS 'Gives one of the caller''s endpoints a new signing secret, shown only here; the previous one signs beside it for `overlapHours` (0 to 168, default 24).';

-- COMMENT chat_public FUNCTION send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text)
COMMENT ON FUNCTION chat_public.send_chat_message(chat_id uuid, content jsonb, response_format text, busy_behavior text, idempotency_key text) IS '@name send_chat_message_checked
@behavior -*
Sends a message. An idle chat starts a turn at once; a busy one queues it (`busy_behavior` "queue") or queues it at the head and interrupts the running turn ("interrupt"). Returns the message or the queued message, with the structured request id when `response_format` asks for one.';

-- COMMENT chat_public FUNCTION send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text)
COMMENT ON FUNCTION chat_public.send_message(chat_id uuid, content jsonb, response_format text, busy_behavior chat_public.busy_behavior, idempotency_key text) IS '@name send_chat_message
Sends a message. An idle chat starts a turn at once; a busy one queues it (QUEUE) or queues it at the head and interrupts the running turn (INTERRUPT). `responseFormat` is the JSON text of the response_format envelope. Returns the message or the queued message, with the structured request id when `responseFormat` asks for one.';

-- COMMENT chat_public FUNCTION set_chat_mcp_servers(chat_id uuid, server_ids text[])
COMMENT ON FUNCTION chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) IS 'Selects the operator-configured MCP servers whose tools the chat is offered (from its next run). Unknown or disabled ids are refused.';

-- COMMENT chat_public FUNCTION set_chat_plan_mode(chat_id uuid, enabled boolean)
COMMENT ON FUNCTION chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) IS 'Switches plan mode. Refused while a structured output request is active or queued, so no obligation is silently dropped.';

-- COMMENT chat_public FUNCTION structured_output_enabled()
COMMENT ON FUNCTION chat_public.structured_output_enabled() IS 'Whether this server accepts new structured output requests (experiment `chat-structured-output`). Accepted requests finish and stay readable either way.';

-- COMMENT chat_public FUNCTION submit_tool_results(chat_id uuid, results jsonb)
COMMENT ON FUNCTION chat_public.submit_tool_results(chat_id uuid, results jsonb) IS 'Answers the client-executed tool calls the chat waits on. `results` is [{tool_call_id, result, is_error?}] and must cover exactly the pending calls.';

-- COMMENT chat_public FUNCTION webhook_endpoints()
COMMENT ON FUNCTION chat_public.webhook_endpoints() IS 'The caller''s webhook endpoints, oldest first, without their secrets.';

-- COMMENT chat_public TABLE batch_items
COMMENT ON TABLE chat_public.batch_items IS '@behavior -insert -update -delete
One line of a batch: its input, the chat and structured request it became, and its status. `errorCode` is the request''s failure or cancellation code, or invalid_line, invalid_input, dispatch_failed, batch_failed, batch_canceled.';

-- COMMENT chat_public TABLE batches
COMMENT ON TABLE chat_public.batches IS '@behavior -insert -update -delete
A batch run: many structured requests with one response format, each line becoming its own chat. `status`: validating (the schema is checked before any item starts), running, completed, failed (with `error`), canceled. Item counts are computed (`itemCounts`).';

-- COMMENT chat_public TABLE chat_messages
COMMENT ON TABLE chat_public.chat_messages IS '@behavior -insert -update -delete
The transcript. `id` is the stream cursor. A receipt (`kind` receipt) carries `structured_output` = {request_id, status, value | error {code, message}}; only receipts carry results.';

-- COMMENT chat_public TABLE chat_queued_messages
COMMENT ON TABLE chat_public.chat_queued_messages IS '@behavior -insert -update -delete
Inputs waiting for the running turn to finish, in `position` order.';

-- COMMENT chat_public TABLE chats
COMMENT ON TABLE chat_public.chats IS '@behavior -insert -update -delete
A conversation and its execution state. `status`: waiting, running, interrupting, requires_action (waiting for client tool results), error. The version counters fence workers and drive live streams.';

-- COMMENT chat_public TABLE structured_output_requests
COMMENT ON TABLE chat_public.structured_output_requests IS '@behavior -insert -update -delete
One row per accepted structured output request: its schema, status (pending, succeeded, failed, canceled) and the receipt that ended it.';

-- COMMENT chat_public TABLE users
COMMENT ON TABLE chat_public.users IS '@behavior -insert -update -delete
People who own chats. The JWT `sub` claim is a user id.';

-- COMMENT chat_public TYPE batch_item_counts
COMMENT ON TYPE chat_public.batch_item_counts IS 'Items of a batch by status.';

-- COMMENT chat_public TYPE busy_behavior
COMMENT ON TYPE chat_public.busy_behavior IS 'What a message sent to a busy chat does: wait in the queue, or interrupt the running turn.';

-- COMMENT chat_public TYPE chat_input_result
COMMENT ON TYPE chat_public.chat_input_result IS 'What an input transition created: the message that started a turn or the queued message, the structured request id minted for it, and any receipts it committed (edit supersession, queue deletion) in id order.';

-- COMMENT chat_public TYPE structured_output
COMMENT ON TYPE chat_public.structured_output IS 'The result a receipt carries. `valueJson` is the exact stored JSON text of the value (numbers keep every digit); `value` is the same value as JSON, for convenience. A succeeded receipt whose value is JSON null has `valueJson` "null".';

-- COMMENT chat_public TYPE structured_output_error
COMMENT ON TYPE chat_public.structured_output_error IS 'Why a structured output request failed or was canceled.';

-- COMMENT chat_public TYPE structured_output_provenance
COMMENT ON TYPE chat_public.structured_output_provenance IS 'How a receipt came about: finalization attempts, model steps, the model config (provider, model id) of the chat, tokens summed over the turn''s model calls (null where no provider reported them), when the turn started and the receipt was written, and the schema hash.';

-- COMMENT chat_public TYPE webhook_endpoint
COMMENT ON TYPE chat_public.webhook_endpoint IS 'A completion webhook endpoint (Standard Webhooks signatures), without its secrets. `rotating`: the previous secret still signs beside the new one. `pending`, `delivered`, `failed` count its deliveries.';

-- COMMENT chat_public TYPE webhook_endpoint_secret
COMMENT ON TYPE chat_public.webhook_endpoint_secret IS 'The signing secret (`whsec_...`) of a new or rotated endpoint. It is shown this once: store it now.';

-- CONSTRAINT chat_private chat_leases chat_leases_pkey
ALTER TABLE ONLY chat_private.chat_leases
    ADD CONSTRAINT chat_leases_pkey PRIMARY KEY (chat_id);

-- CONSTRAINT chat_private deleted_requests deleted_requests_pkey
ALTER TABLE ONLY chat_private.deleted_requests
    ADD CONSTRAINT deleted_requests_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private experiments experiments_pkey
ALTER TABLE ONLY chat_private.experiments
    ADD CONSTRAINT experiments_pkey PRIMARY KEY (name);

-- CONSTRAINT chat_private idempotency_keys idempotency_keys_pkey
ALTER TABLE ONLY chat_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner_id, key);

-- CONSTRAINT chat_private mcp_server_secrets mcp_server_secrets_pkey
ALTER TABLE ONLY chat_private.mcp_server_secrets
    ADD CONSTRAINT mcp_server_secrets_pkey PRIMARY KEY (server_id);

-- CONSTRAINT chat_private mcp_servers mcp_servers_pkey
ALTER TABLE ONLY chat_private.mcp_servers
    ADD CONSTRAINT mcp_servers_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private message_internals message_internals_pkey
ALTER TABLE ONLY chat_private.message_internals
    ADD CONSTRAINT message_internals_pkey PRIMARY KEY (message_id);

-- CONSTRAINT chat_private model_config_secrets model_config_secrets_pkey
ALTER TABLE ONLY chat_private.model_config_secrets
    ADD CONSTRAINT model_config_secrets_pkey PRIMARY KEY (model_config_id);

-- CONSTRAINT chat_private model_configs model_configs_pkey
ALTER TABLE ONLY chat_private.model_configs
    ADD CONSTRAINT model_configs_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private openai_response_rounds openai_response_rounds_owner_id_idempotency_key_key
ALTER TABLE ONLY chat_private.openai_response_rounds
    ADD CONSTRAINT openai_response_rounds_owner_id_idempotency_key_key UNIQUE (owner_id, idempotency_key);

-- CONSTRAINT chat_private openai_response_rounds openai_response_rounds_pkey
ALTER TABLE ONLY chat_private.openai_response_rounds
    ADD CONSTRAINT openai_response_rounds_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private openai_response_rounds openai_response_rounds_request_id_round_key
ALTER TABLE ONLY chat_private.openai_response_rounds
    ADD CONSTRAINT openai_response_rounds_request_id_round_key UNIQUE (request_id, round);

-- CONSTRAINT chat_private openai_responses openai_responses_owner_id_idempotency_key_key
ALTER TABLE ONLY chat_private.openai_responses
    ADD CONSTRAINT openai_responses_owner_id_idempotency_key_key UNIQUE (owner_id, idempotency_key);

-- CONSTRAINT chat_private openai_responses openai_responses_pkey
ALTER TABLE ONLY chat_private.openai_responses
    ADD CONSTRAINT openai_responses_pkey PRIMARY KEY (request_id);

-- CONSTRAINT chat_private server_epoch server_epoch_pkey
ALTER TABLE ONLY chat_private.server_epoch
    ADD CONSTRAINT server_epoch_pkey PRIMARY KEY (one);

-- CONSTRAINT chat_private settings settings_pkey
ALTER TABLE ONLY chat_private.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (name);

-- CONSTRAINT chat_private stop_hook_secrets stop_hook_secrets_pkey
ALTER TABLE ONLY chat_private.stop_hook_secrets
    ADD CONSTRAINT stop_hook_secrets_pkey PRIMARY KEY (hook_id);

-- CONSTRAINT chat_private stop_hooks stop_hooks_name_key
ALTER TABLE ONLY chat_private.stop_hooks
    ADD CONSTRAINT stop_hooks_name_key UNIQUE (name);

-- CONSTRAINT chat_private stop_hooks stop_hooks_pkey
ALTER TABLE ONLY chat_private.stop_hooks
    ADD CONSTRAINT stop_hooks_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private transition_rules transition_rules_pkey
ALTER TABLE ONLY chat_private.transition_rules
    ADD CONSTRAINT transition_rules_pkey PRIMARY KEY (transition, from_state);

-- CONSTRAINT chat_private turn_progress turn_progress_pkey
ALTER TABLE ONLY chat_private.turn_progress
    ADD CONSTRAINT turn_progress_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private webhook_attempts webhook_attempts_pkey
ALTER TABLE ONLY chat_private.webhook_attempts
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt);

-- CONSTRAINT chat_private webhook_deliveries webhook_deliveries_event_id_key
ALTER TABLE ONLY chat_private.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_event_id_key UNIQUE (event_id);

-- CONSTRAINT chat_private webhook_deliveries webhook_deliveries_pkey
ALTER TABLE ONLY chat_private.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private webhook_endpoints webhook_endpoints_pkey
ALTER TABLE ONLY chat_private.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private worker_config_version worker_config_version_pkey
ALTER TABLE ONLY chat_private.worker_config_version
    ADD CONSTRAINT worker_config_version_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_private worker_processes worker_processes_pkey
ALTER TABLE ONLY chat_private.worker_processes
    ADD CONSTRAINT worker_processes_pkey PRIMARY KEY (queue_id);

-- CONSTRAINT chat_public batch_items batch_items_pkey
ALTER TABLE ONLY chat_public.batch_items
    ADD CONSTRAINT batch_items_pkey PRIMARY KEY (batch_id, line);

-- CONSTRAINT chat_public batch_items batch_items_structured_output_request_id_key
ALTER TABLE ONLY chat_public.batch_items
    ADD CONSTRAINT batch_items_structured_output_request_id_key UNIQUE (structured_output_request_id);

-- CONSTRAINT chat_public batches batches_owner_id_idempotency_key_key
ALTER TABLE ONLY chat_public.batches
    ADD CONSTRAINT batches_owner_id_idempotency_key_key UNIQUE (owner_id, idempotency_key);

-- CONSTRAINT chat_public batches batches_pkey
ALTER TABLE ONLY chat_public.batches
    ADD CONSTRAINT batches_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_public chat_messages chat_messages_pkey
ALTER TABLE ONLY chat_public.chat_messages
    ADD CONSTRAINT chat_messages_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_public chat_queued_messages chat_queued_messages_pkey
ALTER TABLE ONLY chat_public.chat_queued_messages
    ADD CONSTRAINT chat_queued_messages_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_public chat_queued_messages chat_queued_messages_structured_output_request_id_key
ALTER TABLE ONLY chat_public.chat_queued_messages
    ADD CONSTRAINT chat_queued_messages_structured_output_request_id_key UNIQUE (structured_output_request_id);

-- CONSTRAINT chat_public chats chats_pkey
ALTER TABLE ONLY chat_public.chats
    ADD CONSTRAINT chats_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_public structured_output_requests structured_output_requests_pkey
ALTER TABLE ONLY chat_public.structured_output_requests
    ADD CONSTRAINT structured_output_requests_pkey PRIMARY KEY (id);

-- CONSTRAINT chat_public structured_output_requests structured_output_requests_receipt_message_id_key
ALTER TABLE ONLY chat_public.structured_output_requests
    ADD CONSTRAINT structured_output_requests_receipt_message_id_key UNIQUE (receipt_message_id);

-- CONSTRAINT chat_public users users_name_key
ALTER TABLE ONLY chat_public.users
    ADD CONSTRAINT users_name_key UNIQUE (name);

-- CONSTRAINT chat_public users users_pkey
ALTER TABLE ONLY chat_public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

-- DEFAULT chat_private turn_progress id
ALTER TABLE ONLY chat_private.turn_progress ALTER COLUMN id SET DEFAULT nextval('chat_private.turn_progress_id_seq'::regclass);

-- DEFAULT chat_public chat_messages id
ALTER TABLE ONLY chat_public.chat_messages ALTER COLUMN id SET DEFAULT nextval('chat_public.chat_messages_id_seq'::regclass);

-- DEFAULT chat_public chat_queued_messages id
ALTER TABLE ONLY chat_public.chat_queued_messages ALTER COLUMN id SET DEFAULT nextval('chat_public.chat_queued_messages_id_seq'::regclass);

-- FK CONSTRAINT chat_private idempotency_keys idempotency_keys_owner_id_fkey
ALTER TABLE ONLY chat_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private mcp_server_secrets mcp_server_secrets_server_id_fkey
ALTER TABLE ONLY chat_private.mcp_server_secrets
    ADD CONSTRAINT mcp_server_secrets_server_id_fkey FOREIGN KEY (server_id) REFERENCES chat_private.mcp_servers(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private message_internals message_internals_message_id_fkey
ALTER TABLE ONLY chat_private.message_internals
    ADD CONSTRAINT message_internals_message_id_fkey FOREIGN KEY (message_id) REFERENCES chat_public.chat_messages(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private model_config_secrets model_config_secrets_model_config_id_fkey
ALTER TABLE ONLY chat_private.model_config_secrets
    ADD CONSTRAINT model_config_secrets_model_config_id_fkey FOREIGN KEY (model_config_id) REFERENCES chat_private.model_configs(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private openai_response_rounds openai_response_rounds_owner_id_fkey
ALTER TABLE ONLY chat_private.openai_response_rounds
    ADD CONSTRAINT openai_response_rounds_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private openai_response_rounds openai_response_rounds_request_id_fkey
ALTER TABLE ONLY chat_private.openai_response_rounds
    ADD CONSTRAINT openai_response_rounds_request_id_fkey FOREIGN KEY (request_id) REFERENCES chat_public.structured_output_requests(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private openai_responses openai_responses_chat_id_fkey
ALTER TABLE ONLY chat_private.openai_responses
    ADD CONSTRAINT openai_responses_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private openai_responses openai_responses_owner_id_fkey
ALTER TABLE ONLY chat_private.openai_responses
    ADD CONSTRAINT openai_responses_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private openai_responses openai_responses_request_id_fkey
ALTER TABLE ONLY chat_private.openai_responses
    ADD CONSTRAINT openai_responses_request_id_fkey FOREIGN KEY (request_id) REFERENCES chat_public.structured_output_requests(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private stop_hook_secrets stop_hook_secrets_hook_id_fkey
ALTER TABLE ONLY chat_private.stop_hook_secrets
    ADD CONSTRAINT stop_hook_secrets_hook_id_fkey FOREIGN KEY (hook_id) REFERENCES chat_private.stop_hooks(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private turn_progress turn_progress_chat_id_fkey
ALTER TABLE ONLY chat_private.turn_progress
    ADD CONSTRAINT turn_progress_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private turn_progress turn_progress_input_message_id_fkey
ALTER TABLE ONLY chat_private.turn_progress
    ADD CONSTRAINT turn_progress_input_message_id_fkey FOREIGN KEY (input_message_id) REFERENCES chat_public.chat_messages(id) ON DELETE SET NULL;

-- FK CONSTRAINT chat_private turn_progress turn_progress_structured_output_request_id_fkey
ALTER TABLE ONLY chat_private.turn_progress
    ADD CONSTRAINT turn_progress_structured_output_request_id_fkey FOREIGN KEY (structured_output_request_id) REFERENCES chat_public.structured_output_requests(id);

-- FK CONSTRAINT chat_private webhook_attempts webhook_attempts_delivery_id_fkey
ALTER TABLE ONLY chat_private.webhook_attempts
    ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES chat_private.webhook_deliveries(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private webhook_deliveries webhook_deliveries_endpoint_id_fkey
ALTER TABLE ONLY chat_private.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES chat_private.webhook_endpoints(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_private webhook_endpoints webhook_endpoints_owner_id_fkey
ALTER TABLE ONLY chat_private.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public batch_items batch_items_batch_id_fkey
ALTER TABLE ONLY chat_public.batch_items
    ADD CONSTRAINT batch_items_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES chat_public.batches(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public batch_items batch_items_chat_id_fkey
ALTER TABLE ONLY chat_public.batch_items
    ADD CONSTRAINT batch_items_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE SET NULL;

-- FK CONSTRAINT chat_public batch_items batch_items_structured_output_request_id_fkey
ALTER TABLE ONLY chat_public.batch_items
    ADD CONSTRAINT batch_items_structured_output_request_id_fkey FOREIGN KEY (structured_output_request_id) REFERENCES chat_public.structured_output_requests(id) ON DELETE SET NULL;

-- FK CONSTRAINT chat_public batches batches_model_config_id_fkey
ALTER TABLE ONLY chat_public.batches
    ADD CONSTRAINT batches_model_config_id_fkey FOREIGN KEY (model_config_id) REFERENCES chat_private.model_configs(id);

-- FK CONSTRAINT chat_public batches batches_owner_id_fkey
ALTER TABLE ONLY chat_public.batches
    ADD CONSTRAINT batches_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public chat_messages chat_messages_chat_id_fkey
ALTER TABLE ONLY chat_public.chat_messages
    ADD CONSTRAINT chat_messages_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public chat_messages chat_messages_created_by_fkey
ALTER TABLE ONLY chat_public.chat_messages
    ADD CONSTRAINT chat_messages_created_by_fkey FOREIGN KEY (created_by) REFERENCES chat_public.users(id) ON DELETE SET NULL;

-- FK CONSTRAINT chat_public chat_messages chat_messages_structured_output_request_id_fkey
ALTER TABLE ONLY chat_public.chat_messages
    ADD CONSTRAINT chat_messages_structured_output_request_id_fkey FOREIGN KEY (structured_output_request_id) REFERENCES chat_public.structured_output_requests(id);

-- FK CONSTRAINT chat_public chat_queued_messages chat_queued_messages_chat_id_fkey
ALTER TABLE ONLY chat_public.chat_queued_messages
    ADD CONSTRAINT chat_queued_messages_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public chat_queued_messages chat_queued_messages_created_by_fkey
ALTER TABLE ONLY chat_public.chat_queued_messages
    ADD CONSTRAINT chat_queued_messages_created_by_fkey FOREIGN KEY (created_by) REFERENCES chat_public.users(id) ON DELETE SET NULL;

-- FK CONSTRAINT chat_public chat_queued_messages chat_queued_messages_structured_output_request_id_fkey
ALTER TABLE ONLY chat_public.chat_queued_messages
    ADD CONSTRAINT chat_queued_messages_structured_output_request_id_fkey FOREIGN KEY (structured_output_request_id) REFERENCES chat_public.structured_output_requests(id);

-- FK CONSTRAINT chat_public chats chats_model_config_id_fkey
ALTER TABLE ONLY chat_public.chats
    ADD CONSTRAINT chats_model_config_id_fkey FOREIGN KEY (model_config_id) REFERENCES chat_private.model_configs(id);

-- FK CONSTRAINT chat_public chats chats_owner_id_fkey
ALTER TABLE ONLY chat_public.chats
    ADD CONSTRAINT chats_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES chat_public.users(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public chats chats_parent_chat_id_fkey
ALTER TABLE ONLY chat_public.chats
    ADD CONSTRAINT chats_parent_chat_id_fkey FOREIGN KEY (parent_chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public structured_output_requests structured_output_requests_chat_id_fkey
ALTER TABLE ONLY chat_public.structured_output_requests
    ADD CONSTRAINT structured_output_requests_chat_id_fkey FOREIGN KEY (chat_id) REFERENCES chat_public.chats(id) ON DELETE CASCADE;

-- FK CONSTRAINT chat_public structured_output_requests structured_output_requests_receipt_fk
ALTER TABLE ONLY chat_public.structured_output_requests
    ADD CONSTRAINT structured_output_requests_receipt_fk FOREIGN KEY (receipt_message_id) REFERENCES chat_public.chat_messages(id);

-- FUNCTION chat_private _accept_structured_request(uuid, jsonb, boolean)
CREATE FUNCTION chat_private._accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean DEFAULT true) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private _active_request(uuid)
CREATE FUNCTION chat_private._active_request(p_chat_id uuid) RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select r.id from chat_private.turn_progress t
          join chat_public.structured_output_requests r on r.id = t.structured_output_request_id
          where t.chat_id = p_chat_id and t.finished_at is null and r.status = 'pending');
end;
$$;

-- FUNCTION chat_private _apply_progress(uuid, jsonb, bigint[])
CREATE FUNCTION chat_private._apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if p_progress is null or p_progress = '{}'::jsonb then
    return;
  end if;
  if p_progress ? 'candidate' and not (p_progress -> 'candidate' ? 'value') then
    raise exception 'a candidate needs a value' using errcode = 'SONCD';
  end if;
  update chat_private.turn_progress t set
    steps = t.steps + coalesce((p_progress ->> 'steps')::integer, 0),
    rejected_batches = t.rejected_batches + case when p_progress ? 'rejection' then 1 else 0 end,
    value_rejected = t.value_rejected or coalesce((p_progress -> 'rejection' ->> 'value_rejected')::boolean, false),
    hook_continuations = t.hook_continuations + case when (p_progress ->> 'hook_continuation')::boolean then 1 else 0 end,
    invalidations = t.invalidations + case when (p_progress ->> 'invalidate_candidate')::boolean then 1 else 0 end,
    candidate_present = case when p_progress ? 'candidate' then true
                             when (p_progress ->> 'invalidate_candidate')::boolean then false else t.candidate_present end,
    candidate_value = case when p_progress ? 'candidate' then p_progress -> 'candidate' -> 'value'
                           when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_value end,
    candidate_step = case when p_progress ? 'candidate' then (p_progress -> 'candidate' ->> 'step')::integer
                          when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_step end,
    candidate_message_id = case when p_progress ? 'candidate'
                                then p_message_ids[(p_progress -> 'candidate' ->> 'message_index')::integer + 1]
                                when (p_progress ->> 'invalidate_candidate')::boolean then null else t.candidate_message_id end
  where t.chat_id = p_chat_id and t.finished_at is null;
end;
$$;
SET default_table_access_method = heap;

-- FUNCTION chat_private _begin_transition(uuid, text, uuid)
CREATE FUNCTION chat_private._begin_transition(p_chat_id uuid, p_transition text, p_owner uuid DEFAULT NULL::uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  update chat_public.chats c set snapshot_version = c.snapshot_version + 1
  where c.id = p_chat_id and (p_owner is null or c.owner_id = p_owner)
    and (chat_private._transition_rule(p_transition, chat_private.chat_state(c))).allowed
  returning * into v_chat;
  if found then
    return v_chat;
  end if;
  select * into v_chat from chat_public.chats where id = p_chat_id for update;
  if not found or (p_owner is not null and v_chat.owner_id <> p_owner) then
    raise exception 'chat not found' using errcode = 'CHNTF';
  end if;
  perform chat_private._check_transition_rule(v_chat, p_transition);
  update chat_public.chats set snapshot_version = snapshot_version + 1 where id = p_chat_id returning * into v_chat;
  return v_chat;
end;
$$;

-- FUNCTION chat_private _begin_worker_transition(uuid, text, uuid, bigint, bigint, boolean)
CREATE FUNCTION chat_private._begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_moves_history boolean DEFAULT false) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  perform chat_private._lock_for_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version,
                                                   p_generation_attempt);
  if p_moves_history then
    return chat_private._fence_history(p_chat_id, true);
  end if;
  update chat_public.chats set snapshot_version = snapshot_version + 1 where id = p_chat_id returning * into v_chat;
  return v_chat;
end;
$$;

-- FUNCTION chat_private _cancel_pending_calls(uuid, text, chat_public.chat_status)
CREATE FUNCTION chat_private._cancel_pending_calls(p_chat_id uuid, p_reason text, p_status chat_public.chat_status) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_calls jsonb;
begin
  select pending_tool_calls into v_calls from chat_public.chats where id = p_chat_id;
  if jsonb_array_length(v_calls) > 0 then
    insert into chat_public.chat_messages (chat_id, role, visibility, kind, content)
    select p_chat_id, 'tool', 'both', 'message', jsonb_agg(jsonb_build_object(
      'type', 'tool-result', 'tool_call_id', c ->> 'tool_call_id', 'tool_name', c ->> 'tool_name',
      'result', jsonb_build_object('error', p_reason), 'is_error', true))
    from jsonb_array_elements(v_calls) c;
  end if;
  update chat_public.chats set status = p_status, pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = p_chat_id;
end;
$$;

-- FUNCTION chat_private _check_transition_rule(chat_public.chats, text)
CREATE FUNCTION chat_private._check_transition_rule(p_chat chat_public.chats, p_transition text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  v_state text := chat_private.chat_state(p_chat);
  v_allowed boolean := (chat_private._transition_rule(p_transition, v_state)).allowed;
begin
  if v_allowed is null then
    raise exception 'unknown transition %', p_transition using errcode = 'XX000';
  end if;
  if not v_allowed then
    if v_state = 'archived' then
      raise exception 'chat is archived' using errcode = 'CHARC';
    end if;
    raise exception '% is not allowed while the chat is %', p_transition, v_state using errcode = 'CHTRN',
      detail = v_state;
  end if;
end;
$$;

-- FUNCTION chat_private _close_turn(uuid)
CREATE FUNCTION chat_private._close_turn(p_chat_id uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  with closed as (
    update chat_private.turn_progress set finished_at = now(), candidate_value = null
    where chat_id = p_chat_id and finished_at is null)
  delete from chat_private.chat_leases where chat_id = p_chat_id;
end;
$$;

-- FUNCTION chat_private _delete_chats(uuid[])
CREATE FUNCTION chat_private._delete_chats(p_chat_ids uuid[]) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_roots uuid[];
  v_ids uuid[];
  v_chat chat_public.chats;
  v_counts jsonb;
  v_jobs integer := 0;
  v_item record;
  v_batch chat_public.batches;
  v_rows bigint;
begin
  select coalesce(array_agg(c.id order by c.id), '{}') into v_roots
  from (select c.id from chat_public.chats c where c.id = any(p_chat_ids) order by c.id for update) c;
  select v_roots || coalesce(array_agg(c.id order by c.id), '{}') into v_ids
  from (select c.id from chat_public.chats c where c.parent_chat_id = any(v_roots) and not c.id = any(v_roots)
        order by c.id for update) c;
  if cardinality(v_ids) = 0 then
    return jsonb_build_object('chats', 0);
  end if;
  select jsonb_build_object(
    'chats', cardinality(v_ids),
    'messages', (select count(*) from chat_public.chat_messages where chat_id = any(v_ids)),
    'queued_messages', (select count(*) from chat_public.chat_queued_messages where chat_id = any(v_ids)),
    'structured_requests', (select count(*) from chat_public.structured_output_requests where chat_id = any(v_ids)),
    'pending_structured_requests', (select count(*) from chat_public.structured_output_requests
                                    where chat_id = any(v_ids) and status = 'pending'),
    'turns', (select count(*) from chat_private.turn_progress where chat_id = any(v_ids)),
    'leases', (select count(*) from chat_private.chat_leases where chat_id = any(v_ids)))
  into v_counts;
  -- Tell running steps first (a hint: the lease and the fence decide).
  for v_chat in select * from chat_public.chats where id = any(v_ids) and status in ('running', 'interrupting') loop
    v_chat.status := 'interrupting';
    perform pg_notify('chatd:worker', chat_private.chat_notification(v_chat, 'deleted'));
  end loop;
  perform pg_notify('chatd:chat:' || id, json_build_object('chat_id', id, 'change', 'deleted')::text)
  from unnest(v_ids) id;
  delete from chat_private.chat_leases where chat_id = any(v_ids);
  select v_jobs + count(*) into v_jobs from unnest(v_ids) id,
    lateral (select graphile_worker.remove_job(k) from unnest(array['chat:' || id, 'chat-deadline:' || id]) k) r
  where (r.remove_job).id is not null;
  -- A job that lost its key (a worker held it when a removal came: Graphile Worker then clears the key and leaves
  -- the job to its task) and then failed still names the chat in its payload, which only Graphile Worker's table
  -- holds (its public view has no payload): read there, removed through complete_jobs. A locked one goes when its
  -- task ends.
  select v_jobs + count(*) into v_jobs from graphile_worker.complete_jobs(array(
    select j.id from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier in ('chat_run', 'chat_requires_action_deadline') and j.key is null and j.locked_at is null
      and j.payload ->> 'chat_id' = any(v_ids::text[])));
  for v_item in
    update chat_public.batch_items set status = 'canceled', error_code = 'chat_deleted',
      error_message = 'the item''s chat was deleted', finished_at = now()
    where chat_id = any(v_ids) and status = 'running'
    returning batch_id, slot
  loop
    select * into v_batch from chat_public.batches where id = v_item.batch_id for update;
    if v_item.slot is null or v_batch.status <> 'running' or v_item.slot > v_batch.concurrency
       or not chat_private.fill_batch_slot(v_batch, v_item.slot) then
      perform chat_private.complete_batch_if_done(v_item.batch_id);
    end if;
    perform chat_private.notify_batch(v_item.batch_id, 'progress');
  end loop;
  -- Their webhook deliveries go too (a pending one is never sent: it would send the receiver to a Response that
  -- reads as deleted). A delivery job left behind finds no delivery and ends.
  delete from chat_private.webhook_deliveries d
  where d.subject_id = any(array(select 'resp_' || replace(r.id::text, '-', '')
                                 from chat_public.structured_output_requests r where r.chat_id = any(v_ids)));
  get diagnostics v_rows = row_count;
  v_counts := v_counts || jsonb_build_object('webhook_deliveries', v_rows);
  insert into chat_private.deleted_requests (id, owner_id)
  select r.id, c.owner_id from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.chat_id = any(v_ids)
  on conflict (id) do nothing;
  delete from chat_private.idempotency_keys k
  using (select distinct owner_id from chat_public.chats where id = any(v_roots)) o
  where k.owner_id = o.owner_id and k.result ->> 'chat_id' = any(v_ids::text[]);
  -- Messages and requests reference each other (inputs and receipts name their request, a request its receipt):
  -- one statement deletes both, so each key is checked once both sides are gone. The chats' cascades take the rest.
  with requests as (
    delete from chat_public.structured_output_requests where chat_id = any(v_ids) returning 1),
  turns as (
    delete from chat_private.turn_progress where chat_id = any(v_ids) returning 1),
  messages as (
    delete from chat_public.chat_messages where chat_id = any(v_ids) returning 1),
  queued as (
    delete from chat_public.chat_queued_messages where chat_id = any(v_ids) returning 1)
  select (select count(*) from requests) + (select count(*) from turns) + (select count(*) from messages)
    + (select count(*) from queued) into v_rows;
  delete from chat_public.chats where id = any(v_ids) and parent_chat_id is not null;
  delete from chat_public.chats where id = any(v_ids);
  return v_counts || jsonb_build_object('jobs', v_jobs);
end;
$$;

-- FUNCTION chat_private _end_turn(uuid, text, text, boolean)
CREATE FUNCTION chat_private._end_turn(p_chat_id uuid, p_transition text, p_from_state text, p_bump boolean) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  update chat_public.chats c set snapshot_version = c.snapshot_version + case when p_bump then 1 else 0 end,
    status = chat_private._to_state(p_transition, coalesce(p_from_state, chat_private.chat_state(c)),
      case when exists (select 1 from chat_public.chat_queued_messages q where q.chat_id = p_chat_id)
           then 'running' else 'waiting' end),
    retry_state = null, last_error = null, pending_tool_calls = '[]', requires_action_deadline_at = null
  where c.id = p_chat_id
  returning * into v_chat;
  return v_chat;
end;
$$;

-- FUNCTION chat_private _fail_turn(uuid, text, text)
CREATE FUNCTION chat_private._fail_turn(p_chat_id uuid, p_kind text, p_message text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_request uuid := chat_private._active_request(p_chat_id);
  v_queued uuid;
begin
  if v_request is not null then
    perform chat_private._write_receipt(v_request, 'failed', 'generation_failed', p_message);
  end if;
  for v_queued in
    delete from chat_public.chat_queued_messages
    where chat_id = p_chat_id and structured_output_request_id is not null
    returning structured_output_request_id
  loop
    perform chat_private._write_receipt(v_queued, 'failed', 'generation_failed',
      format('The chat entered error (%s) before this queued request ran.', p_kind));
  end loop;
  perform chat_private._close_turn(p_chat_id);
  update chat_public.chats c set status = chat_private._to_state('finish_error', chat_private.chat_state(c)),
    retry_state = null,
    last_error = jsonb_build_object('kind', p_kind, 'message', left(p_message, 2000)),
    pending_tool_calls = '[]', requires_action_deadline_at = null
  where id = p_chat_id;
end;
$$;

-- FUNCTION chat_private _fence_history(uuid, boolean)
CREATE FUNCTION chat_private._fence_history(p_chat_id uuid, p_bump boolean DEFAULT false) RETURNS chat_public.chats
    LANGUAGE plpgsql
    AS $$
declare
  v_chat chat_public.chats;
begin
  if p_bump then
    update chat_public.chats c set snapshot_version = c.snapshot_version + 1, history_version = c.snapshot_version + 1,
      generation_attempt = 0
    where c.id = p_chat_id
    returning * into v_chat;
  else
    update chat_public.chats c set history_version = c.snapshot_version, generation_attempt = 0
    where c.id = p_chat_id and (c.history_version is distinct from c.snapshot_version or c.generation_attempt <> 0)
    returning * into v_chat;
  end if;
  return v_chat;
end;
$$;

-- FUNCTION chat_private _finish_locked_turn(uuid, jsonb)
CREATE FUNCTION chat_private._finish_locked_turn(p_chat_id uuid, p_outcome jsonb) RETURNS chat_public.chat_status
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_request uuid;
  v_request_chat uuid;
  v_candidate_present boolean;
  v_candidate_value jsonb;
  v_chat chat_public.chats;
begin
  v_chat := chat_private._end_turn(p_chat_id, 'finish_turn', null, true);
  -- _active_request, _open_turn and _write_receipt's locking read in one statement: the open turn's request, locked
  -- FOR UPDATE and still pending after any wait for that lock (the status is checked again on the newest row
  -- version), so it has no receipt yet and _record_receipt writes the only one.
  select r.id, r.chat_id, t.candidate_present, t.candidate_value
  into v_request, v_request_chat, v_candidate_present, v_candidate_value
  from chat_private.turn_progress t
  join chat_public.structured_output_requests r on r.id = t.structured_output_request_id
  where t.chat_id = p_chat_id and t.finished_at is null and r.status = 'pending'
  for update of r;
  if v_request is not null then
    if p_outcome is null then
      -- The value comes from the durable candidate record, never from the caller.
      if not v_candidate_present then
        raise exception 'the structured request has no current validated candidate' using errcode = 'SONCD';
      end if;
      perform chat_private._record_receipt(v_request, v_request_chat, 'succeeded', null, null, v_candidate_value);
    elsif p_outcome ->> 'status' = 'failed' then
      perform chat_private._record_receipt(v_request, v_request_chat, 'failed', p_outcome ->> 'code',
                                          p_outcome ->> 'message', null);
    else
      raise exception 'outcome must be null or a failure' using errcode = 'CIINV', column = 'outcome';
    end if;
  end if;
  v_chat := chat_private._promote_after_turn(v_chat);
  -- notify_chat: the chat is waiting or running, so only its own channel applies (the worker channel is for
  -- interrupting chats and history resets).
  perform chat_private.notify_chat_row(v_chat, 'turn_finished');
  return v_chat.status;
end;
$$;

-- FUNCTION chat_private _insert_input(uuid, jsonb, uuid, uuid)
CREATE FUNCTION chat_private._insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_id bigint;
begin
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id, created_by)
  values (p_chat_id, 'user', 'both', 'message', p_content, p_request_id, p_created_by)
  returning id into v_id;
  return v_id;
end;
$$;

-- FUNCTION chat_private _insert_worker_messages(uuid, jsonb)
CREATE FUNCTION chat_private._insert_worker_messages(p_chat_id uuid, p_messages jsonb) RETURNS bigint[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_ids bigint[];
begin
  if p_messages is null or jsonb_typeof(p_messages) <> 'array' then
    raise exception 'messages must be an array' using errcode = 'CIINV', column = 'messages';
  end if;
  if jsonb_array_length(p_messages) = 0 then
    return '{}';
  end if;
  with inserted as (
    insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, usage)
    select p_chat_id, (m.item ->> 'role')::chat_public.message_role,
           coalesce(m.item ->> 'visibility', 'both')::chat_public.message_visibility, m.kind, m.item -> 'content',
           m.item -> 'usage'
    from (select e.item, chat_private.worker_message_kind(e.item) as kind
          from jsonb_array_elements(p_messages) e(item) offset 0) m
    returning id),
  ids as (
    select array_agg(id order by id) as ids from inserted),
  internals as (
    insert into chat_private.message_internals (message_id, provider_metadata, finish, finalizer_screening)
    select i.ids[e.n], e.item -> 'internals' -> 'provider_metadata', e.item -> 'internals' -> 'finish',
           e.item -> 'internals' -> 'finalizer_screening'
    from ids i, jsonb_array_elements(p_messages) with ordinality e(item, n)
    where e.item -> 'internals' is not null)
  select i.ids into v_ids from ids i;
  return v_ids;
end;
$$;

-- FUNCTION chat_private _lease_is_live(uuid, uuid)
CREATE FUNCTION chat_private._lease_is_live(p_chat_id uuid, p_runner_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return exists (select 1 from chat_private.chat_leases l
                 where l.chat_id = p_chat_id and (p_runner_id is null or l.runner_id = p_runner_id)
                   and chat_private.lease_row_is_live(l.expires_at));
end;
$$;

-- FUNCTION chat_private _lock_for_worker_transition(uuid, text, uuid, bigint, bigint)
CREATE FUNCTION chat_private._lock_for_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
declare
  v_chat chat_public.chats;
begin
  perform 1 from chat_public.chats c
  where c.id = p_chat_id
    and (p_runner_id is null or (c.history_version = p_history_version and c.generation_attempt = p_generation_attempt))
    and (chat_private._transition_rule(p_transition, chat_private.chat_state(c))).allowed
  for no key update;
  if not found then
    select * into v_chat from chat_public.chats where id = p_chat_id for no key update;
    if not found then
      raise exception 'chat not found' using errcode = 'CHNTF';
    end if;
    if p_runner_id is not null and (v_chat.history_version is distinct from p_history_version
       or v_chat.generation_attempt is distinct from p_generation_attempt
       or not chat_private._lease_is_live(p_chat_id, p_runner_id)) then
      raise exception 'fence lost: the chat changed or the lease passed to another runner' using errcode = 'CHFNC';
    end if;
    perform chat_private._check_transition_rule(v_chat, p_transition);
  end if;
  if p_runner_id is null then
    if chat_private._lease_is_live(p_chat_id, null) then
      raise exception 'another runner holds the lease' using errcode = 'CHLSD';
    end if;
  elsif not chat_private._lease_is_live(p_chat_id, p_runner_id) then
    raise exception 'fence lost: the chat changed or the lease passed to another runner' using errcode = 'CHFNC';
  end if;
end;
$$;

-- FUNCTION chat_private _open_turn(uuid)
CREATE FUNCTION chat_private._open_turn(p_chat_id uuid) RETURNS chat_private.turn_progress
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select t from chat_private.turn_progress t where t.chat_id = p_chat_id and t.finished_at is null);
end;
$$;

-- FUNCTION chat_private _openai_response_round(uuid, uuid)
CREATE FUNCTION chat_private._openai_response_round(p_id uuid, p_user uuid, OUT request_id uuid, OUT round integer, OUT superseded boolean) RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce(x.request_id, p_id), coalesce(x.round, 0),
    exists (select 1 from chat_private.openai_response_rounds y
            where y.request_id = coalesce(x.request_id, p_id) and y.round > coalesce(x.round, 0))
  from (select 1) one
  left join chat_private.openai_response_rounds x on x.id = p_id and x.owner_id = p_user;
$$;

-- FUNCTION chat_private _promote_after_turn(chat_public.chats)
CREATE FUNCTION chat_private._promote_after_turn(p_chat chat_public.chats) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  perform chat_private._close_turn(p_chat.id);
  if p_chat.status <> 'running' then
    return p_chat;
  end if;
  if chat_private._promote_queue_head(p_chat.id) is null then
    raise exception 'the queue head of chat % vanished under the chat lock', p_chat.id using errcode = 'XX000';
  end if;
  select * into v_chat from chat_public.chats where id = p_chat.id;
  return v_chat;
end;
$$;

-- FUNCTION chat_private _promote_queue_head(uuid)
CREATE FUNCTION chat_private._promote_queue_head(p_chat_id uuid) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_queued chat_public.chat_queued_messages;
  v_message_id bigint;
begin
  delete from chat_public.chat_queued_messages
  where id = (select id from chat_public.chat_queued_messages where chat_id = p_chat_id order by position limit 1)
  returning * into v_queued;
  if not found then
    return null;
  end if;
  v_message_id := chat_private._insert_input(p_chat_id, v_queued.content, v_queued.structured_output_request_id,
                                            v_queued.created_by);
  perform chat_private._start_turn(p_chat_id, v_message_id, v_queued.structured_output_request_id);
  return v_message_id;
end;
$$;

-- FUNCTION chat_private _queue_message(uuid, jsonb, uuid, uuid, boolean)
CREATE FUNCTION chat_private._queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_id bigint;
begin
  insert into chat_public.chat_queued_messages (chat_id, content, structured_output_request_id, created_by, position)
  values (p_chat_id, p_content, p_request_id, p_created_by,
          case when p_at_head then -nextval('chat_public.chat_queued_messages_position')
               else nextval('chat_public.chat_queued_messages_position') end)
  returning id into v_id;
  return v_id;
end;
$$;

-- FUNCTION chat_private _receipt_provenance(uuid, uuid)
CREATE FUNCTION chat_private._receipt_provenance(p_request_id uuid, p_chat_id uuid) RETURNS TABLE(finalization_attempts integer, model_steps integer, model_config_id text, provider text, model text, input_tokens bigint, output_tokens bigint, started_at timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
  with turns as (
    select t.* from chat_private.turn_progress t where t.structured_output_request_id = p_request_id
  ), usage as (
    select sum(u.input_tokens)::bigint as input_tokens, sum(u.output_tokens)::bigint as output_tokens
    from turns t
    cross join lateral (
      select sum((m.usage ->> 'inputTokens')::bigint) as input_tokens, sum((m.usage ->> 'outputTokens')::bigint) as output_tokens
      from chat_public.chat_messages m
      where m.chat_id = t.chat_id and m.id > coalesce(t.input_message_id, 0) and m.usage is not null
        and m.created_at >= t.started_at and (t.finished_at is null or m.created_at <= t.finished_at)) u
  )
  select coalesce((select sum(t.rejected_batches + t.invalidations + case when t.candidate_present then 1 else 0 end)
                   from turns t), 0)::integer,
         coalesce((select sum(t.steps) from turns t), 0)::integer,
         c.model_config_id, mc.provider, mc.model, u.input_tokens, u.output_tokens,
         (select min(t.started_at) from turns t)
  from chat_public.chats c
  left join chat_private.model_configs mc on mc.id = c.model_config_id
  cross join usage u
  where c.id = p_chat_id;
$$;

-- FUNCTION chat_private _record_receipt(uuid, uuid, chat_public.structured_output_status, text, text, jsonb)
CREATE FUNCTION chat_private._record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_output jsonb;
  v_text text;
  v_message text;
  v_id bigint;
begin
  if p_status = 'succeeded' then
    if p_value is null then
      raise exception 'a success receipt needs a value (JSON null is the jsonb value ''null'')' using errcode = 'SONCD';
    end if;
    v_output := jsonb_build_object('request_id', p_request_id, 'status', p_status, 'value', p_value);
    v_text := p_value::text;
  else
    v_message := left(coalesce(p_message, case p_code
      when 'not_produced' then 'The model finished without producing the structured output.'
      when 'validation_exhausted' then 'The model did not produce a valid structured output within its repair budget.'
      when 'refused' then 'The model refused to produce the structured output.'
      when 'generation_failed' then 'The turn failed before the structured output was produced.'
      when 'configuration_error' then 'The structured output request cannot run with this configuration.'
      when 'interrupted' then 'The structured output request was interrupted.'
      when 'superseded' then 'The structured output request was superseded by an edit.'
      when 'queue_deleted' then 'The queued structured output request was deleted.'
      when 'operator_canceled' then 'An operator canceled the structured output request.'
      else 'The structured output request did not succeed.' end), 2000);
    v_output := jsonb_build_object('request_id', p_request_id, 'status', p_status,
                                   'error', jsonb_build_object('code', p_code, 'message', v_message));
    v_text := v_message;
  end if;
  perform set_config('chatd.writing_receipt', 'on', true);
  insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id,
                                         structured_output)
  values (p_chat_id, 'assistant', 'user', 'receipt', jsonb_build_array(jsonb_build_object('type', 'text', 'text', v_text)),
          p_request_id, v_output)
  returning id into v_id;
  perform set_config('chatd.writing_receipt', '', true);
  update chat_public.structured_output_requests r
  set status = p_status, error_code = p_code, error_message = v_message, receipt_message_id = v_id, finished_at = now(),
      finalization_attempts = p.finalization_attempts, model_steps = p.model_steps, model_config_id = p.model_config_id,
      provider = p.provider, model = p.model, input_tokens = p.input_tokens, output_tokens = p.output_tokens,
      started_at = p.started_at
  from chat_private._receipt_provenance(p_request_id, p_chat_id) p
  where r.id = p_request_id;
  return v_id;
end;
$$;

-- FUNCTION chat_private _server_epoch()
CREATE FUNCTION chat_private._server_epoch() RETURNS chat_private.server_epoch
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_epoch text := (select system_identifier::text from pg_control_system()) || '/'
    || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/' || pg_postmaster_start_time()::text;
  v_row chat_private.server_epoch;
begin
  select * into v_row from chat_private.server_epoch;
  if v_row.epoch = v_epoch then
    return v_row;
  end if;
  -- Concurrent callers: the row lock orders them, and the second finds the epoch recorded (the where clause is
  -- evaluated again after the first commits), so last_seen_before is taken once, before any report of the epoch.
  insert into chat_private.server_epoch as e (epoch, observed_at, last_seen_before)
  values (v_epoch, case when v_row.epoch is null then pg_postmaster_start_time() else now() end,
          (select max(seen_at) from chat_private.worker_processes))
  on conflict (one) do update set epoch = excluded.epoch, observed_at = excluded.observed_at,
    last_seen_before = excluded.last_seen_before
  where e.epoch is distinct from excluded.epoch;
  select * into v_row from chat_private.server_epoch;
  return v_row;
end;
$$;

-- FUNCTION chat_private _start_turn(uuid, bigint, uuid)
CREATE FUNCTION chat_private._start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private._close_turn(p_chat_id);
  insert into chat_private.turn_progress (chat_id, input_message_id, structured_output_request_id)
  values (p_chat_id, p_input_message_id, p_request_id);
end;
$$;

-- FUNCTION chat_private _to_state(text, text, text)
CREATE FUNCTION chat_private._to_state(p_transition text, p_from_state text, p_to_state text DEFAULT NULL::text) RETURNS chat_public.chat_status
    LANGUAGE plpgsql STABLE
    AS $$
declare
  v_targets text[] := (chat_private._transition_rule(p_transition, p_from_state)).to_state;
begin
  if p_to_state is null and cardinality(v_targets) = 1 then
    return v_targets[1]::chat_public.chat_status;
  end if;
  if p_to_state is null or not p_to_state = any(v_targets) then
    raise exception '% from % cannot lead to % (transition_rules: %)', p_transition, p_from_state,
      coalesce(p_to_state, 'an unnamed state'), v_targets using errcode = 'XX000';
  end if;
  return p_to_state::chat_public.chat_status;
end;
$$;

-- FUNCTION chat_private _transition_rule(text, text)
CREATE FUNCTION chat_private._transition_rule(p_transition text, p_from_state text) RETURNS chat_private.transition_rules
    LANGUAGE plpgsql STABLE
    AS $$
begin
  return (select r from chat_private.transition_rules r where r.transition = p_transition and r.from_state = p_from_state);
end;
$$;

-- FUNCTION chat_private _write_receipt(uuid, chat_public.structured_output_status, text, text, jsonb)
CREATE FUNCTION chat_private._write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text DEFAULT NULL::text, p_message text DEFAULT NULL::text, p_value jsonb DEFAULT NULL::jsonb) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_request chat_public.structured_output_requests;
begin
  select * into v_request from chat_public.structured_output_requests where id = p_request_id for update;
  if not found then
    raise exception 'structured output request % not found', p_request_id using errcode = 'SONTF';
  end if;
  if v_request.status <> 'pending' then
    return null;
  end if;
  return chat_private._record_receipt(p_request_id, v_request.chat_id, p_status, p_code, p_message, p_value);
end;
$$;

-- FUNCTION chat_private accept_structured_request(uuid, jsonb, boolean)
CREATE FUNCTION chat_private.accept_structured_request(p_chat_id uuid, p_json_schema jsonb, p_check_experiment boolean DEFAULT true) RETURNS uuid
    LANGUAGE plpgsql
    AS $$
begin return chat_private._accept_structured_request(p_chat_id, p_json_schema, p_check_experiment); end $$;

-- FUNCTION chat_private acquire_lease(uuid, text, integer)
CREATE FUNCTION chat_private.acquire_lease(p_chat_id uuid, p_worker_id text, p_lease_seconds integer DEFAULT NULL::integer) RETURNS chat_private.fence
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_chat chat_public.chats;
  v_runner uuid := gen_random_uuid();
begin
  -- The lock and the checks (rule, then CHLSD) are _lock_for_worker_transition's; one UPDATE then bumps
  -- snapshot_version and starts the new generation attempt: one row version.
  perform chat_private._lock_for_worker_transition(p_chat_id, 'acquire_lease', null, null, null);
  update chat_public.chats c set snapshot_version = c.snapshot_version + 1, generation_attempt = c.generation_attempt + 1
  where c.id = p_chat_id
  returning * into v_chat;
  -- The default length is read as chat_private.setting_int reads it, without the cost of calling it.
  insert into chat_private.chat_leases (chat_id, runner_id, worker_id, expires_at)
  values (p_chat_id, v_runner, p_worker_id,
          now() + make_interval(secs => coalesce(p_lease_seconds,
            (select (s.value #>> '{}')::integer from chat_private.settings s where s.name = 'lease_seconds'))))
  on conflict (chat_id) do update set runner_id = excluded.runner_id, worker_id = excluded.worker_id,
    acquired_at = now(), expires_at = excluded.expires_at;
  perform chat_private.notify_chat_row(v_chat, 'attempt');
  -- The chat row is final and the lease row is ours (both written above under the chat lock): this is what
  -- current_fence would read.
  return (v_runner, v_chat.history_version, v_chat.generation_attempt)::chat_private.fence;
end;
$$;

-- FUNCTION chat_private active_request(uuid)
CREATE FUNCTION chat_private.active_request(p_chat_id uuid) RETURNS uuid
    LANGUAGE plpgsql STABLE
    AS $$
begin return chat_private._active_request(p_chat_id); end $$;

-- FUNCTION chat_private add_job(text, json, text, timestamp with time zone, integer)
CREATE FUNCTION chat_private.add_job(p_task text, p_payload json, p_job_key text DEFAULT NULL::text, p_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_max_attempts integer DEFAULT 25) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
begin
  perform graphile_worker.add_job(p_task, p_payload, run_at => p_run_at, job_key => p_job_key,
    max_attempts => p_max_attempts);
end;
$$;

-- FUNCTION chat_private agent_child(uuid, uuid)
CREATE FUNCTION chat_private.agent_child(p_parent uuid, p_child uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_child chat_public.chats;
begin
  select * into v_child from chat_public.chats c where c.id = p_child and c.parent_chat_id = p_parent;
  if not found then
    raise exception 'agent not found' using errcode = 'CHNTF', column = 'agent_id';
  end if;
  return v_child;
end;
$$;

-- FUNCTION chat_private agent_interrupt(uuid, uuid, uuid)
CREATE FUNCTION chat_private.agent_interrupt(p_parent uuid, p_runner uuid, p_child uuid) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_child chat_public.chats;
  v_claim text := current_setting('jwt.claims.sub', true);
begin
  perform chat_private.check_agent_runner(p_parent, p_runner);
  v_child := chat_private.agent_child(p_parent, p_child);
  perform set_config('jwt.claims.sub', v_child.owner_id::text, true);
  v_child := chat_public.interrupt_chat(p_child);
  perform set_config('jwt.claims.sub', coalesce(v_claim, ''), true);
  return v_child.status::text;
end;
$$;

-- FUNCTION chat_private agent_send(uuid, uuid, uuid, jsonb, boolean)
CREATE FUNCTION chat_private.agent_send(p_parent uuid, p_runner uuid, p_child uuid, p_content jsonb, p_interrupt boolean) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_child chat_public.chats;
  v_claim text := current_setting('jwt.claims.sub', true);
  v_result chat_public.chat_input_result;
begin
  perform chat_private.check_agent_runner(p_parent, p_runner);
  v_child := chat_private.agent_child(p_parent, p_child);
  perform set_config('jwt.claims.sub', v_child.owner_id::text, true);
  v_result := chat_public.send_chat_message(p_child, p_content, null,
    case when p_interrupt then 'interrupt' else 'queue' end, null);
  perform set_config('jwt.claims.sub', coalesce(v_claim, ''), true);
  return v_result;
end;
$$;

-- FUNCTION chat_private apply_progress(uuid, jsonb, bigint[])
CREATE FUNCTION chat_private.apply_progress(p_chat_id uuid, p_progress jsonb, p_message_ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin perform chat_private._apply_progress(p_chat_id, p_progress, p_message_ids); end $$;

-- FUNCTION chat_private begin_transition(uuid, text, uuid)
CREATE FUNCTION chat_private.begin_transition(p_chat_id uuid, p_transition text, p_owner uuid DEFAULT NULL::uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql
    AS $$
begin return chat_private._begin_transition(p_chat_id, p_transition, p_owner); end $$;

-- FUNCTION chat_private begin_worker_transition(uuid, text, uuid, bigint, bigint)
CREATE FUNCTION chat_private.begin_worker_transition(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint) RETURNS chat_public.chats
    LANGUAGE plpgsql
    AS $$
begin return chat_private._begin_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version, p_generation_attempt, false); end $$;

-- FUNCTION chat_private cancel_batch_as(uuid, uuid, text)
CREATE FUNCTION chat_private.cancel_batch_as(p_batch_id uuid, p_owner uuid, p_reason text) RETURNS chat_public.batches
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private cancel_pending_calls(uuid, text)
CREATE FUNCTION chat_private.cancel_pending_calls(p_chat_id uuid, p_reason text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform chat_private._cancel_pending_calls(p_chat_id, p_reason, (select c.status from chat_public.chats c where c.id = p_chat_id));
end $$;

-- FUNCTION chat_private cancel_requires_action(uuid)
CREATE FUNCTION chat_private.cancel_requires_action(p_chat_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  v_chat := chat_private._begin_transition(p_chat_id, 'cancel_requires_action');
  if v_chat.requires_action_deadline_at > now() then
    return false;
  end if;
  perform chat_private._cancel_pending_calls(p_chat_id, 'canceled: the client did not answer before the deadline',
    chat_private._to_state('cancel_requires_action', 'requires_action', 'running'));
  perform chat_private.notify_chat(p_chat_id, 'status');
  return true;
end;
$$;

-- FUNCTION chat_private chat_notification(chat_public.chats, text)
CREATE FUNCTION chat_private.chat_notification(p_chat chat_public.chats, p_change text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select pg_catalog.json_build_object(
    'chat_id', (p_chat).id, 'change', p_change, 'status', (p_chat).status, 'archived', (p_chat).archived,
    'snapshot_version', (p_chat).snapshot_version, 'history_version', (p_chat).history_version,
    'queue_version', (p_chat).queue_version, 'generation_attempt', (p_chat).generation_attempt)::text;
$$;

-- FUNCTION chat_private chat_state(chat_public.chats)
CREATE FUNCTION chat_private.chat_state(p_chat chat_public.chats) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select case when (p_chat).archived then 'archived' else (p_chat).status::text end;
$$;

-- FUNCTION chat_private check_agent_runner(uuid, uuid)
CREATE FUNCTION chat_private.check_agent_runner(p_parent uuid, p_runner uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_parent chat_public.chats;
begin
  select * into v_parent from chat_public.chats where id = p_parent;
  if not found then
    raise exception 'chat not found' using errcode = 'CHNTF';
  end if;
  if not chat_private._lease_is_live(p_parent, p_runner) then
    raise exception 'the runner no longer holds the parent chat''s lease' using errcode = 'CHFNC';
  end if;
  return v_parent;
end;
$$;

-- FUNCTION chat_private check_client_key(text)
CREATE FUNCTION chat_private.check_client_key(p_key text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  if p_key like 'batch:%' or p_key like 'agent:%' then
    raise exception 'idempotency_key must not start with batch: or agent: (reserved for keys chatd mints)'
      using errcode = 'CIINV', column = 'idempotency_key';
  end if;
end;
$$;

-- FUNCTION chat_private check_dynamic_tools(jsonb)
CREATE FUNCTION chat_private.check_dynamic_tools(p_tools jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
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
$_$;

-- FUNCTION chat_private check_input_content(jsonb, text)
CREATE FUNCTION chat_private.check_input_content(p_content jsonb, p_field text DEFAULT 'content'::text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_part jsonb;
  v_index integer := 0;
begin
  if p_content is null or jsonb_typeof(p_content) <> 'array' or jsonb_array_length(p_content) = 0 then
    raise exception '% must be a non-empty array of parts', p_field using errcode = 'CIINV', column = p_field;
  end if;
  if jsonb_array_length(p_content) > 64 then
    raise exception '% has more than 64 parts', p_field using errcode = 'CIINV', column = p_field;
  end if;
  if octet_length(p_content::text) > 262144 then
    raise exception '% is larger than 256 KiB', p_field using errcode = 'CIINV', column = p_field;
  end if;
  for v_part in select e from jsonb_array_elements(p_content) e loop
    if jsonb_typeof(v_part) <> 'object' or v_part ->> 'type' is distinct from 'text' then
      raise exception '%[%].type must be "text"', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s].type', p_field, v_index);
    end if;
    if jsonb_typeof(v_part -> 'text') is distinct from 'string' then
      raise exception '%[%].text must be a string', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s].text', p_field, v_index);
    end if;
    if exists (select 1 from jsonb_object_keys(v_part) k where k not in ('type', 'text')) then
      raise exception '%[%] has unknown fields', p_field, v_index
        using errcode = 'CIINV', column = format('%s[%s]', p_field, v_index);
    end if;
    v_index := v_index + 1;
  end loop;
end;
$$;

-- FUNCTION chat_private check_workspace(text)
CREATE FUNCTION chat_private.check_workspace(p_workspace text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
begin
  if p_workspace is not null
     and p_workspace operator(pg_catalog.!~) '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$' then
    raise exception 'workspace must be a folder name (letters, digits, _ . -)' using errcode = 'CIINV', column = 'workspace';
  end if;
end;
$_$;

-- FUNCTION chat_private commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb, text[])
CREATE FUNCTION chat_private.commit_step(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb DEFAULT '{}'::jsonb, p_deltas text[] DEFAULT NULL::text[]) RETURNS chat_private.fence
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_ids bigint[];
  v_chat chat_public.chats;
begin
  -- Every row _insert_worker_messages accepts is history, so a non-empty array moves the fence: the chat comes back
  -- as that one UPDATE left it, and it is final, since the rows inserted next find the fence current and write the
  -- chat no more (_fence_history). It serves the notification and the new fence; the lease is p_runner_id's (the
  -- lock checked it is live, and nothing here changes it): what current_fence would read, without reading it.
  v_chat := chat_private._begin_worker_transition(p_chat_id, 'commit_step', p_runner_id, p_history_version,
    p_generation_attempt, case when jsonb_typeof(p_messages) = 'array' then jsonb_array_length(p_messages) > 0 else false end);
  v_ids := chat_private._insert_worker_messages(p_chat_id, p_messages);
  perform chat_private._apply_progress(p_chat_id, p_progress, v_ids);
  perform pg_notify('chatd:chat:' || p_chat_id || ':parts', d) from unnest(p_deltas) with ordinality u(d, n) order by n;
  perform chat_private.notify_chat_row(v_chat, 'step');
  return (p_runner_id, v_chat.history_version, v_chat.generation_attempt)::chat_private.fence;
end;
$$;

-- FUNCTION chat_private commit_step_and_finish_turn(uuid, uuid, bigint, bigint, jsonb, jsonb, jsonb, text[])
CREATE FUNCTION chat_private.commit_step_and_finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_messages jsonb, p_progress jsonb, p_outcome jsonb DEFAULT NULL::jsonb, p_deltas text[] DEFAULT NULL::text[], OUT runner_id uuid, OUT history_version bigint, OUT generation_attempt bigint, OUT status chat_public.chat_status) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_fence chat_private.fence;
begin
  v_fence := chat_private.commit_step(p_chat_id, p_runner_id, p_history_version, p_generation_attempt, p_messages, p_progress,
                                      p_deltas);
  runner_id := v_fence.runner_id;
  history_version := v_fence.history_version;
  generation_attempt := v_fence.generation_attempt;
  -- finish_turn without its lock and checks: commit_step holds the chat lock and checked the fence (which it moved
  -- to v_fence itself), the lease (which nothing here changes) and its rule. commit_step and finish_turn are allowed
  -- from the same states and commit_step leaves the status alone, so finish_turn's rule holds too
  -- (test/db/worker-transitions.test.ts asserts both, and that the fused commit locks once).
  if not exists (select 1 from chat_private.stop_hooks h where h.enabled) then
    status := chat_private._finish_locked_turn(p_chat_id, p_outcome);
  end if;
end;
$$;

-- FUNCTION chat_private compact_history(uuid, uuid, bigint, bigint, text, bigint, text, jsonb)
CREATE FUNCTION chat_private.compact_history(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_summary text, p_up_to_message_id bigint, p_marker text, p_usage jsonb DEFAULT NULL::jsonb) RETURNS chat_private.fence
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private complete_batch_if_done(uuid)
CREATE FUNCTION chat_private.complete_batch_if_done(p_batch_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private create_chat_as(uuid, jsonb, jsonb, text, text, text, jsonb, boolean, text, boolean)
CREATE FUNCTION chat_private.create_chat_as(p_owner uuid, p_content jsonb, p_format jsonb, p_model_config_id text, p_title text, p_workspace text, p_dynamic_tools jsonb, p_plan_mode boolean, p_idempotency_key text, p_check_experiment boolean DEFAULT true) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private current_fence(uuid)
CREATE FUNCTION chat_private.current_fence(p_chat_id uuid) RETURNS chat_private.fence
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select (l.runner_id, c.history_version, c.generation_attempt)::chat_private.fence
          from chat_public.chats c left join chat_private.chat_leases l on l.chat_id = c.id
          where c.id = p_chat_id);
end;
$$;

-- FUNCTION chat_private dispatch_batch(uuid)
CREATE FUNCTION chat_private.dispatch_batch(p_batch_id uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private end_turn_and_promote(uuid)
CREATE FUNCTION chat_private.end_turn_and_promote(p_chat_id uuid) RETURNS chat_public.chat_status
    LANGUAGE plpgsql
    AS $$
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

-- FUNCTION chat_private enqueue_chat_run(uuid)
CREATE FUNCTION chat_private.enqueue_chat_run(p_chat_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private.add_job('chat_run', json_build_object('chat_id', p_chat_id),
    p_job_key => 'chat:' || p_chat_id, p_max_attempts => 1);
end;
$$;

-- FUNCTION chat_private enter_requires_action(uuid, uuid, bigint, bigint, jsonb, integer)
CREATE FUNCTION chat_private.enter_requires_action(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_pending_calls jsonb, p_timeout_seconds integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_chat chat_public.chats;
  v_deadline timestamptz;
begin
  v_chat := chat_private._begin_worker_transition(p_chat_id, 'enter_requires_action', p_runner_id, p_history_version,
                                                 p_generation_attempt);
  if p_pending_calls is null or jsonb_typeof(p_pending_calls) <> 'array' or jsonb_array_length(p_pending_calls) = 0
     or exists (select 1 from jsonb_array_elements(p_pending_calls) c
                where c ->> 'tool_name' = 'coder_structured_output'
                   or not exists (select 1 from jsonb_array_elements(v_chat.dynamic_tools) t
                                  where t ->> 'name' = c ->> 'tool_name')
                   or jsonb_typeof(c -> 'tool_call_id') is distinct from 'string') then
    raise exception 'pending calls must be calls of the chat''s declared dynamic tools' using errcode = 'TLRES';
  end if;
  v_deadline := now() + make_interval(secs => coalesce(p_timeout_seconds,
                                                       chat_private.setting_int('requires_action_timeout_seconds')));
  update chat_public.chats set status = chat_private._to_state('enter_requires_action', 'running'),
    pending_tool_calls = p_pending_calls,
    requires_action_deadline_at = v_deadline
  where id = p_chat_id;
  delete from chat_private.chat_leases where chat_id = p_chat_id;
  perform chat_private.add_job('chat_requires_action_deadline', json_build_object('chat_id', p_chat_id),
    p_run_at => v_deadline, p_job_key => 'chat-deadline:' || p_chat_id, p_max_attempts => 5);
  perform chat_private.notify_chat(p_chat_id, 'action_required');
end;
$$;

-- FUNCTION chat_private experiment_enabled(text)
CREATE FUNCTION chat_private.experiment_enabled(p_name text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return coalesce((select enabled from chat_private.experiments where name = p_name), false);
end;
$$;

-- FUNCTION chat_private fail_turn(uuid, text, text)
CREATE FUNCTION chat_private.fail_turn(p_chat_id uuid, p_kind text, p_message text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin perform chat_private._fail_turn(p_chat_id, p_kind, p_message); end $$;

-- FUNCTION chat_private fill_batch_slot(chat_public.batches, integer)
CREATE FUNCTION chat_private.fill_batch_slot(p_batch chat_public.batches, p_slot integer) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private finish_batch_validation(uuid, text)
CREATE FUNCTION chat_private.finish_batch_validation(p_batch_id uuid, p_error text) RETURNS chat_public.batch_status
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private finish_error(uuid, uuid, bigint, bigint, text, text)
CREATE FUNCTION chat_private.finish_error(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_kind text, p_message text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  perform chat_private._begin_worker_transition(p_chat_id, 'finish_error', p_runner_id, p_history_version,
                                                p_generation_attempt);
  perform chat_private._fail_turn(p_chat_id, p_kind, p_message);
  perform chat_private.notify_chat(p_chat_id, 'error');
end;
$$;

-- FUNCTION chat_private finish_interruption(uuid, uuid, bigint, bigint, jsonb)
CREATE FUNCTION chat_private.finish_interruption(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_partial_messages jsonb DEFAULT '[]'::jsonb) RETURNS chat_public.chat_status
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_request uuid;
  v_status chat_public.chat_status;
begin
  -- Partial output is history: a non-empty array moves the fence.
  perform chat_private._begin_worker_transition(p_chat_id, 'finish_interruption', p_runner_id, p_history_version,
    p_generation_attempt,
    case when jsonb_typeof(p_partial_messages) = 'array' then jsonb_array_length(p_partial_messages) > 0 else false end);
  perform chat_private._insert_worker_messages(p_chat_id, coalesce(p_partial_messages, '[]'));
  v_request := chat_private._active_request(p_chat_id);
  if v_request is not null then
    perform chat_private._write_receipt(v_request, 'canceled', 'interrupted');
  end if;
  -- The bump was _begin_worker_transition's (the receipt carries it), so _end_turn only sets the end state.
  v_status := (chat_private._promote_after_turn(
    chat_private._end_turn(p_chat_id, 'finish_interruption', 'interrupting', false))).status;
  perform chat_private.notify_chat(p_chat_id, 'interrupted');
  return v_status;
end;
$$;

-- FUNCTION chat_private finish_turn(uuid, uuid, bigint, bigint, jsonb)
CREATE FUNCTION chat_private.finish_turn(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_outcome jsonb DEFAULT NULL::jsonb) RETURNS chat_public.chat_status
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  perform chat_private._lock_for_worker_transition(p_chat_id, 'finish_turn', p_runner_id, p_history_version,
                                                   p_generation_attempt);
  return chat_private._finish_locked_turn(p_chat_id, p_outcome);
end;
$$;

-- FUNCTION chat_private grant_execute(regprocedure, text[])
CREATE FUNCTION chat_private.grant_execute(p_function regprocedure, p_roles text[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  v_grantee text;
begin
  for v_grantee in
    select distinct case when a.grantee = 0 then 'public' else pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) end
    from pg_catalog.pg_proc p, pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
    where p.oid = p_function and a.grantee <> p.proowner
  loop
    execute pg_catalog.format('revoke all on function %s from %s', p_function, v_grantee);
  end loop;
  if pg_catalog.cardinality(p_roles) > 0 then
    execute pg_catalog.format('grant execute on function %s to %s', p_function,
      (select pg_catalog.string_agg(pg_catalog.quote_ident(r), ', ') from pg_catalog.unnest(p_roles) r));
  end if;
end;
$$;

-- FUNCTION chat_private graphql_tagged(text, text)
CREATE FUNCTION chat_private.graphql_tagged(p_comment text, p_tags text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select p_tags || coalesce(E'\n' || nullif(regexp_replace(coalesce(p_comment, ''), '^(@[^\n]*\n?)+', ''), ''), '');
$$;

-- FUNCTION chat_private idempotent_result(uuid, text, text)
CREATE FUNCTION chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
begin return chat_private.idempotent_result(p_owner, p_key, p_operation, null::text); end $$;

-- FUNCTION chat_private idempotent_result(uuid, text, text, text)
CREATE FUNCTION chat_private.idempotent_result(p_owner uuid, p_key text, p_operation text, p_request_sha256 text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_row chat_private.idempotency_keys;
begin
  if p_key is null then
    return null;
  end if;
  if length(p_key) not between 1 and 200 then
    raise exception 'idempotency_key must have 1 to 200 characters' using errcode = 'CIINV', column = 'idempotency_key';
  end if;
  perform pg_advisory_xact_lock(hashtextextended(p_owner::text || ':' || p_key, 7010420));
  select * into v_row from chat_private.idempotency_keys where owner_id = p_owner and key = p_key;
  if found and v_row.operation <> p_operation then
    raise exception 'idempotency_key was already used for %', v_row.operation using errcode = 'IDKEY',
      column = 'idempotency_key';
  end if;
  if found and v_row.request_sha256 is distinct from p_request_sha256 and v_row.request_sha256 is not null then
    raise exception 'idempotency_key was already used with a different request' using errcode = 'IDKEY',
      column = 'idempotency_key';
  end if;
  return v_row.result;
end;
$$;

-- FUNCTION chat_private insert_batch(uuid, jsonb, jsonb, text, text, text, integer, text)
CREATE FUNCTION chat_private.insert_batch(p_owner uuid, p_format jsonb, p_items jsonb, p_name text, p_model_config_id text, p_workspace text, p_concurrency integer, p_idempotency_key text) RETURNS chat_public.batches
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
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
$_$;

-- FUNCTION chat_private insert_input(uuid, jsonb, uuid, uuid)
CREATE FUNCTION chat_private.insert_input(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
begin return chat_private._insert_input(p_chat_id, p_content, p_request_id, p_created_by); end $$;

-- FUNCTION chat_private insert_worker_messages(uuid, jsonb)
CREATE FUNCTION chat_private.insert_worker_messages(p_chat_id uuid, p_messages jsonb) RETURNS bigint[]
    LANGUAGE plpgsql
    AS $$
begin return chat_private._insert_worker_messages(p_chat_id, p_messages); end $$;

-- FUNCTION chat_private lease_row_is_live(timestamp with time zone)
CREATE FUNCTION chat_private.lease_row_is_live(p_expires_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select p_expires_at > now();
$$;

-- FUNCTION chat_private lock_worker_chat(uuid, text, uuid, bigint, bigint, boolean)
CREATE FUNCTION chat_private.lock_worker_chat(p_chat_id uuid, p_transition text, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_history_changes boolean) RETURNS chat_public.chats
    LANGUAGE plpgsql
    AS $$
begin
  return chat_private._begin_worker_transition(p_chat_id, p_transition, p_runner_id, p_history_version, p_generation_attempt,
                                               p_history_changes);
end $$;

-- FUNCTION chat_private notify_batch(uuid, text)
CREATE FUNCTION chat_private.notify_batch(p_batch_id uuid, p_change text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select pg_notify('chatd:batch:' || b.id, json_build_object('batch_id', b.id, 'change', p_change,
    'status', b.status)::text)
  from chat_public.batches b where b.id = p_batch_id;
$$;

-- FUNCTION chat_private notify_chat(uuid, text)
CREATE FUNCTION chat_private.notify_chat(p_chat_id uuid, p_change text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat chat_public.chats;
begin
  select * into v_chat from chat_public.chats c where c.id = p_chat_id;
  if not found then
    return;
  end if;
  perform chat_private.notify_chat_row(v_chat, p_change);
  if v_chat.status = 'interrupting' or p_change = 'history_reset' then
    perform pg_notify('chatd:worker', chat_private.chat_notification(v_chat, p_change));
  end if;
end;
$$;

-- FUNCTION chat_private notify_chat_row(chat_public.chats, text)
CREATE FUNCTION chat_private.notify_chat_row(p_chat chat_public.chats, p_change text) RETURNS void
    LANGUAGE sql
    AS $$
  select pg_catalog.pg_notify('chatd:chat:' || (p_chat).id, chat_private.chat_notification(p_chat, p_change));
$$;

-- FUNCTION chat_private open_turn(uuid)
CREATE FUNCTION chat_private.open_turn(p_chat_id uuid) RETURNS chat_private.turn_progress
    LANGUAGE plpgsql STABLE
    AS $$
begin return chat_private._open_turn(p_chat_id); end $$;

-- FUNCTION chat_private openai_idempotent_response(uuid, text, text)
CREATE FUNCTION chat_private.openai_idempotent_response(p_user uuid, p_idempotency_key text, p_body_sha256 text) RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private operator_cancel_batch(uuid, text)
CREATE FUNCTION chat_private.operator_cancel_batch(p_batch_id uuid, p_reason text) RETURNS chat_public.batches
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if p_reason is null or length(btrim(p_reason)) = 0 or length(p_reason) > 500 then
    raise exception 'a reason of 1 to 500 characters is required' using errcode = 'CIINV', column = 'reason';
  end if;
  return chat_private.cancel_batch_as(p_batch_id, null, p_reason);
end;
$$;

-- FUNCTION chat_private operator_cancel_request(uuid, text)
CREATE FUNCTION chat_private.operator_cancel_request(p_request_id uuid, p_reason text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_request chat_public.structured_output_requests;
  v_chat chat_public.chats;
  v_receipt bigint;
  v_active boolean;
begin
  if p_reason is null or length(btrim(p_reason)) = 0 or length(p_reason) > 500 then
    raise exception 'a reason of 1 to 500 characters is required' using errcode = 'CIINV', column = 'reason';
  end if;
  select * into v_request from chat_public.structured_output_requests where id = p_request_id;
  if not found then
    raise exception 'structured output request not found' using errcode = 'SONTF';
  end if;
  v_chat := chat_private._begin_transition(v_request.chat_id, 'operator_cancel_request');
  v_active := chat_private._active_request(v_chat.id) is not distinct from p_request_id;
  delete from chat_public.chat_queued_messages where structured_output_request_id = p_request_id;
  v_receipt := chat_private._write_receipt(p_request_id, 'canceled', 'operator_canceled', p_reason);
  if v_receipt is null then
    raise exception 'the request has already finished' using errcode = 'SODON';
  end if;
  if v_active and v_chat.status = 'running' then
    update chat_public.chats set status = chat_private._to_state('operator_cancel_request', 'running', 'interrupting')
    where id = v_chat.id;
  elsif v_active and v_chat.status = 'requires_action' then
    perform chat_private._cancel_pending_calls(v_chat.id, 'canceled: an operator canceled the request',
      chat_private._to_state('operator_cancel_request', 'requires_action', 'running'));
    perform chat_private._promote_after_turn(
      chat_private._end_turn(v_chat.id, 'operator_cancel_request', 'requires_action', false));
  end if;
  perform chat_private.notify_chat(v_chat.id, 'operator_canceled');
  return v_receipt;
end;
$$;

-- FUNCTION chat_private operator_create_batch(uuid, text, jsonb, text, text, text, integer, text)
CREATE FUNCTION chat_private.operator_create_batch(p_owner uuid, p_response_format text, p_items jsonb, p_name text DEFAULT NULL::text, p_model_config_id text DEFAULT NULL::text, p_workspace text DEFAULT NULL::text, p_concurrency integer DEFAULT 4, p_idempotency_key text DEFAULT NULL::text) RETURNS chat_public.batches
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if p_owner is null or not exists (select 1 from chat_public.users where id = p_owner) then
    raise exception 'owner must be an existing user' using errcode = 'CIINV', column = 'owner';
  end if;
  return chat_private.insert_batch(p_owner, chat_private.parse_response_format(p_response_format), p_items, p_name,
    p_model_config_id, p_workspace, p_concurrency, p_idempotency_key);
end;
$$;

-- FUNCTION chat_private operator_delete_chat(uuid)
CREATE FUNCTION chat_private.operator_delete_chat(p_chat_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_report jsonb;
begin
  v_report := chat_private._delete_chats(array[p_chat_id]);
  if (v_report ->> 'chats')::int = 0 then
    raise exception 'chat not found' using errcode = 'CHNTF', column = 'chat_id';
  end if;
  return v_report;
end;
$$;

-- FUNCTION chat_private operator_delete_user(uuid)
CREATE FUNCTION chat_private.operator_delete_user(p_user_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user chat_public.users;
  v_report jsonb;
  v_batches integer;
  v_items integer;
  v_keys integer;
  v_tombstones integer;
  v_endpoints integer;
  v_deliveries integer;
begin
  select * into v_user from chat_public.users where id = p_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'USNTF', column = 'user_id';
  end if;
  v_report := chat_private._delete_chats(array(select id from chat_public.chats where owner_id = p_user_id
                                               and parent_chat_id is null));
  select count(*) into v_items from chat_public.batch_items i join chat_public.batches b on b.id = i.batch_id
  where b.owner_id = p_user_id;
  with gone as (delete from chat_public.batches where owner_id = p_user_id returning 1) select count(*) into v_batches from gone;
  select count(*) into v_deliveries from chat_private.webhook_deliveries d
  join chat_private.webhook_endpoints e on e.id = d.endpoint_id where e.owner_id = p_user_id;
  with gone as (delete from chat_private.webhook_endpoints where owner_id = p_user_id returning 1)
  select count(*) into v_endpoints from gone;
  with gone as (delete from chat_private.idempotency_keys where owner_id = p_user_id returning 1) select count(*) into v_keys from gone;
  with gone as (delete from chat_private.deleted_requests where owner_id = p_user_id returning 1)
  select count(*) into v_tombstones from gone;
  delete from chat_public.users where id = p_user_id;
  return jsonb_build_object('user_id', v_user.id, 'name', v_user.name) || v_report || jsonb_build_object(
    'batches', v_batches, 'batch_items', v_items, 'idempotency_keys', v_keys, 'deleted_request_ids', v_tombstones,
    'webhook_endpoints', v_endpoints, 'webhook_deliveries', coalesce((v_report ->> 'webhook_deliveries')::int, 0) + v_deliveries);
end;
$$;

-- FUNCTION chat_private operator_release_lease(uuid)
CREATE FUNCTION chat_private.operator_release_lease(p_chat_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_released boolean;
begin
  perform chat_private._begin_transition(p_chat_id, 'operator_release_lease');
  delete from chat_private.chat_leases where chat_id = p_chat_id returning true into v_released;
  perform chat_private.enqueue_chat_run(p_chat_id);
  perform chat_private.notify_chat(p_chat_id, 'lease_released');
  return coalesce(v_released, false);
end;
$$;

-- FUNCTION chat_private operator_retry_chat(uuid)
CREATE FUNCTION chat_private.operator_retry_chat(p_chat_id uuid) RETURNS chat_public.chat_status
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_last bigint;
begin
  perform chat_private._begin_transition(p_chat_id, 'operator_retry_chat');
  if chat_private._promote_queue_head(p_chat_id) is null then
    select id into v_last from chat_public.chat_messages
    where chat_id = p_chat_id and role = 'user' and kind = 'message' and not deleted order by id desc limit 1;
    if v_last is null then
      raise exception 'the chat has no user input to retry' using errcode = 'CHTRN';
    end if;
    perform chat_private._start_turn(p_chat_id, v_last, null);
  end if;
  update chat_public.chats set status = chat_private._to_state('operator_retry_chat', 'error'), last_error = null,
    retry_state = null
  where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, 'status');
  return 'running';
end;
$$;

-- FUNCTION chat_private parse_response_format(text)
CREATE FUNCTION chat_private.parse_response_format(p_text text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private promote_queue_head(uuid)
CREATE FUNCTION chat_private.promote_queue_head(p_chat_id uuid) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
begin return chat_private._promote_queue_head(p_chat_id); end $$;

-- FUNCTION chat_private queue_message(uuid, jsonb, uuid, uuid, boolean)
CREATE FUNCTION chat_private.queue_message(p_chat_id uuid, p_content jsonb, p_request_id uuid, p_created_by uuid, p_at_head boolean) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
begin return chat_private._queue_message(p_chat_id, p_content, p_request_id, p_created_by, p_at_head); end $$;

-- FUNCTION chat_private record_receipt(uuid, uuid, chat_public.structured_output_status, text, text, jsonb)
CREATE FUNCTION chat_private.record_receipt(p_request_id uuid, p_chat_id uuid, p_status chat_public.structured_output_status, p_code text, p_message text, p_value jsonb) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
begin return chat_private._record_receipt(p_request_id, p_chat_id, p_status, p_code, p_message, p_value); end $$;

-- FUNCTION chat_private record_retry_state(uuid, uuid, bigint, bigint, jsonb)
CREATE FUNCTION chat_private.record_retry_state(p_chat_id uuid, p_runner_id uuid, p_history_version bigint, p_generation_attempt bigint, p_state jsonb) RETURNS chat_private.fence
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  if p_state is not null and (jsonb_typeof(p_state) <> 'object' or jsonb_typeof(p_state -> 'attempt') <> 'number') then
    raise exception 'retry state must be an object with an attempt number' using errcode = 'CIINV', column = 'state';
  end if;
  perform chat_private._begin_worker_transition(p_chat_id, 'record_retry_state', p_runner_id, p_history_version,
                                               p_generation_attempt);
  update chat_public.chats set retry_state = p_state,
    generation_attempt = generation_attempt + case when p_state is null then 0 else 1 end
  where id = p_chat_id;
  perform chat_private.notify_chat(p_chat_id, case when p_state is null then 'retry_cleared' else 'retry' end);
  return chat_private.current_fence(p_chat_id);
end;
$$;

-- FUNCTION chat_private release_lease(uuid, uuid)
CREATE FUNCTION chat_private.release_lease(p_chat_id uuid, p_runner_id uuid) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  delete from chat_private.chat_leases where chat_id = p_chat_id and runner_id = p_runner_id;
$$;

-- FUNCTION chat_private remember_result(uuid, text, text, jsonb)
CREATE FUNCTION chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin perform chat_private.remember_result(p_owner, p_key, p_operation, p_result, null::text); end $$;

-- FUNCTION chat_private remember_result(uuid, text, text, jsonb, text)
CREATE FUNCTION chat_private.remember_result(p_owner uuid, p_key text, p_operation text, p_result jsonb, p_request_sha256 text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  insert into chat_private.idempotency_keys (owner_id, key, operation, result, request_sha256)
  select p_owner, p_key, p_operation, p_result, p_request_sha256 where p_key is not null;
end;
$$;

-- FUNCTION chat_private renew_lease(uuid, uuid, integer)
CREATE FUNCTION chat_private.renew_lease(p_chat_id uuid, p_runner_id uuid, p_lease_seconds integer DEFAULT NULL::integer) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  with renewed as (
    update chat_private.chat_leases
    set expires_at = now() + make_interval(secs => coalesce(p_lease_seconds, chat_private.setting_int('lease_seconds')))
    where chat_id = p_chat_id and runner_id = p_runner_id
    returning 1)
  select exists (select 1 from renewed);
$$;

-- FUNCTION chat_private renew_leases(uuid[], uuid[], integer[])
CREATE FUNCTION chat_private.renew_leases(p_chat_ids uuid[], p_runner_ids uuid[], p_lease_seconds integer[]) RETURNS TABLE(runner_id uuid, renewed boolean, status text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if cardinality(p_runner_ids) is distinct from cardinality(p_chat_ids) then
    raise exception 'runner_ids must pair with chat_ids' using errcode = 'CIINV', column = 'runner_ids';
  end if;
  if cardinality(p_lease_seconds) is distinct from cardinality(p_chat_ids) then
    raise exception 'lease_seconds must pair with chat_ids' using errcode = 'CIINV', column = 'lease_seconds';
  end if;
  return query
  with wanted as (
    select w.chat_id, w.runner_id, w.lease_seconds
    from unnest(p_chat_ids, p_runner_ids, p_lease_seconds) w (chat_id, runner_id, lease_seconds)),
  held as (
    select l.chat_id, w.lease_seconds from chat_private.chat_leases l
    join wanted w on w.chat_id = l.chat_id and w.runner_id = l.runner_id
    for no key update of l skip locked),
  done as (
    update chat_private.chat_leases l
    set expires_at = now() + make_interval(secs => coalesce(h.lease_seconds, chat_private.setting_int('lease_seconds')))
    from held h
    where l.chat_id = h.chat_id
    returning l.runner_id)
  select w.runner_id,
    case when r.runner_id is not null then true
         -- Still this runner's in the statement's snapshot, so its row was skipped, not lost.
         when exists (select 1 from chat_private.chat_leases l where l.chat_id = w.chat_id and l.runner_id = w.runner_id)
           then null
         else false end,
    c.status::text
  from wanted w
  left join done r on r.runner_id = w.runner_id
  left join chat_public.chats c on c.id = w.chat_id;
end;
$$;

-- FUNCTION chat_private report_worker_alive(text, text, numeric)
CREATE FUNCTION chat_private.report_worker_alive(p_queue_id text, p_worker_id text, p_ttl_seconds numeric) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  -- The first report of a new server epoch records it before its own report (_server_epoch: last_seen_before).
  select chat_private._server_epoch();
  insert into chat_private.worker_processes (queue_id, worker_id, expires_at)
  values (p_queue_id, p_worker_id, now() + make_interval(secs => p_ttl_seconds))
  on conflict (queue_id) do update set seen_at = now(), expires_at = excluded.expires_at;
$$;

-- FUNCTION chat_private report_worker_stopped(text)
CREATE FUNCTION chat_private.report_worker_stopped(p_queue_id text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  delete from chat_private.worker_processes where queue_id = p_queue_id;
$$;

-- FUNCTION chat_private request_sha256(jsonb)
CREATE FUNCTION chat_private.request_sha256(p_request jsonb) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
  return pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_request::text, 'UTF8')), 'hex');
end;
$$;

-- FUNCTION chat_private require_user()
CREATE FUNCTION chat_private.require_user() RETURNS uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_public.current_user_id();
begin
  if v_user is null or not exists (select 1 from chat_public.users where id = v_user) then
    raise exception 'authentication required' using errcode = 'NOAUT';
  end if;
  return v_user;
end;
$$;

-- FUNCTION chat_private response_format_errors(jsonb)
CREATE FUNCTION chat_private.response_format_errors(p_format jsonb) RETURNS TABLE(field text, detail text)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
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
$_$;

-- FUNCTION chat_private retention_candidates(text, integer)
CREATE FUNCTION chat_private.retention_candidates(p_rule text, p_limit integer) RETURNS TABLE(id uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_days integer;
begin
  v_days := chat_private.setting_int(case p_rule when 'archived_chats' then 'retention_archived_chat_days'
                                                 when 'idle_chats' then 'retention_idle_chat_days'
                                                 when 'finished_batches' then 'retention_finished_batch_days'
                                                 when 'deleted_requests' then 'deleted_request_days' end);
  if coalesce(v_days, 0) <= 0 then
    return;
  end if;
  if p_rule = 'archived_chats' then
    return query select c.id from chat_public.chats c
      where c.archived and c.parent_chat_id is null and c.updated_at < now() - make_interval(days => v_days)
      limit p_limit;
  elsif p_rule = 'idle_chats' then
    return query select c.id from chat_public.chats c
      where not c.archived and c.parent_chat_id is null and c.status in ('waiting', 'error')
        and c.updated_at < now() - make_interval(days => v_days)
        and not exists (select 1 from chat_public.batch_items i where i.chat_id = c.id)
      limit p_limit;
  elsif p_rule = 'finished_batches' then
    return query select b.id from chat_public.batches b
      where b.finished_at < now() - make_interval(days => v_days) order by b.finished_at limit p_limit;
  elsif p_rule = 'deleted_requests' then
    return query select d.id from chat_private.deleted_requests d
      where d.deleted_at < now() - make_interval(days => v_days) limit p_limit;
  end if;
end;
$$;

-- FUNCTION chat_private retention_due()
CREATE FUNCTION chat_private.retention_due() RETURNS TABLE(rule text, days integer, due bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select r.rule, coalesce(chat_private.setting_int(r.setting), 0),
    case when r.transient then (select count(*) from chat_private.transient_candidates(r.rule, 2147483647))
         else (select count(*) from chat_private.retention_candidates(r.rule, 2147483647)) end
  from (values ('archived_chats', 'retention_archived_chat_days', false),
               ('idle_chats', 'retention_idle_chat_days', false),
               ('finished_batches', 'retention_finished_batch_days', false),
               ('deleted_requests', 'deleted_request_days', false),
               ('idempotency_keys', 'idempotency_key_days', true),
               ('webhook_deliveries', 'webhook_delivery_days', true),
               ('failed_jobs', 'failed_job_days', true))
       r (rule, setting, transient);
$$;

-- FUNCTION chat_private run_retention()
CREATE FUNCTION chat_private.run_retention() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_limit integer := greatest(coalesce(chat_private.setting_int('retention_batch_size'), 50), 1);
  v_chats uuid[];
  v_batch uuid;
  v_report jsonb;
  v_batches integer := 0;
  v_requests integer;
  v_keys integer;
  v_deliveries integer;
  v_jobs integer;
begin
  select coalesce(array_agg(s.id), '{}') into v_chats from (
    select c.id from chat_public.chats c
    where c.id in (select id from chat_private.retention_candidates('archived_chats', v_limit)
                   union all select id from chat_private.retention_candidates('idle_chats', v_limit))
    limit v_limit for update skip locked) s;
  if cardinality(v_chats) < v_limit then
    select b.id into v_batch from chat_public.batches b
    where b.id in (select id from chat_private.retention_candidates('finished_batches', 1)) for update skip locked;
    if v_batch is not null then
      v_chats := v_chats || array(select i.chat_id from chat_public.batch_items i
                                  where i.batch_id = v_batch and i.chat_id is not null
                                  limit v_limit - cardinality(v_chats));
      if not exists (select 1 from chat_public.batch_items i where i.batch_id = v_batch and i.chat_id is not null
                     and not i.chat_id = any(v_chats)) then
        v_batches := 1;
      end if;
    end if;
  end if;
  v_report := chat_private._delete_chats(v_chats);
  if v_batches = 1 then
    delete from chat_private.webhook_deliveries where subject_id = 'batch_' || replace(v_batch::text, '-', '');
    delete from chat_public.batches where id = v_batch;
  end if;
  with gone as (delete from chat_private.deleted_requests where id in
                  (select id from chat_private.retention_candidates('deleted_requests', v_limit)) returning 1)
  select count(*) into v_requests from gone;
  delete from chat_private.idempotency_keys k
  using chat_private.transient_candidates('idempotency_keys', v_limit) t
  where k.owner_id = t.owner_id and k.key = t.key;
  get diagnostics v_keys = row_count;
  -- The status is checked again on the row itself: a replay may have made the delivery pending meanwhile.
  delete from chat_private.webhook_deliveries d
  where d.id in (select t.id from chat_private.transient_candidates('webhook_deliveries', v_limit) t)
    and d.status <> 'pending';
  get diagnostics v_deliveries = row_count;
  select count(*) into v_jobs from graphile_worker.complete_jobs(array(
    select t.id from chat_private.transient_candidates('failed_jobs', v_limit) t));
  return jsonb_build_object('chats', (v_report ->> 'chats')::int, 'batches', v_batches, 'deleted_request_ids', v_requests,
    'idempotency_keys', v_keys, 'webhook_deliveries', v_deliveries, 'failed_jobs', v_jobs);
end;
$$;

-- FUNCTION chat_private schema_sha256(jsonb)
CREATE FUNCTION chat_private.schema_sha256(p_schema jsonb) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_schema::pg_catalog.text, 'UTF8')), 'hex');
$$;

-- FUNCTION chat_private service_gauges()
CREATE FUNCTION chat_private.service_gauges() RETURNS json
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select pg_catalog.json_build_object(
    'receipts', (select coalesce(pg_catalog.json_agg(r), '[]') from (
       select status::text, error_code as code, pg_catalog.count(*)::int as n
       from chat_public.structured_output_requests where status <> 'pending' group by 1, 2) r),
    'pending', (select pg_catalog.count(*)::int from chat_public.structured_output_requests where status = 'pending'),
    'turns', (select coalesce(pg_catalog.json_agg(t), '[]') from (
       select case when finished_at is null then 'open' else 'finished' end as state, pg_catalog.count(*)::int as n
       from chat_private.turn_progress group by 1) t),
    'jobs', (select coalesce(pg_catalog.json_agg(j), '[]') from (
       select task_identifier as task,
              case when locked_at is not null then 'locked' when run_at > pg_catalog.now() then 'scheduled' else 'ready' end as state,
              pg_catalog.count(*)::int as n
       from graphile_worker.jobs group by 1, 2) j),
    'queued', (select pg_catalog.count(*)::int from chat_public.chat_queued_messages),
    'recoveries', (select coalesce(pg_catalog.sum(recoveries), 0)::int from chat_private.turn_progress),
    'stuck', (select pg_catalog.count(*)::int from chat_private.stuck_chats),
    'batches', (select coalesce(pg_catalog.json_agg(b), '[]') from (
       select status::text, pg_catalog.count(*)::int as n from chat_public.batches group by 1) b),
    'items', (select coalesce(pg_catalog.json_agg(i), '[]') from (
       select i.status::text, pg_catalog.count(*)::int as n
       from chat_public.batch_items i join chat_public.batches b on b.id = i.batch_id
       where b.finished_at is null group by 1) i))
$$;

-- FUNCTION chat_private setting(text)
CREATE FUNCTION chat_private.setting(p_name text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select value from chat_private.settings where name = p_name);
end;
$$;

-- FUNCTION chat_private setting_int(text)
CREATE FUNCTION chat_private.setting_int(p_name text) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return (select (value #>> '{}')::integer from chat_private.settings where name = p_name);
end;
$$;

-- FUNCTION chat_private spawn_child_chat(uuid, uuid, jsonb, text, text)
CREATE FUNCTION chat_private.spawn_child_chat(p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_parent chat_public.chats;
  v_result chat_public.chat_input_result;
begin
  v_parent := chat_private.check_agent_runner(p_parent, p_runner);
  if v_parent.parent_chat_id is not null then
    raise exception 'a child chat cannot spawn agents (depth 1)' using errcode = 'AGDEP';
  end if;
  if (select count(*) from chat_public.chats c where c.parent_chat_id = p_parent) >= 32
     and not exists (select 1 from chat_private.idempotency_keys k where k.owner_id = v_parent.owner_id and k.key = p_key) then
    raise exception 'a chat has at most 32 agents' using errcode = 'AGLIM';
  end if;
  v_result := chat_private.create_chat_as(v_parent.owner_id, p_content, null, v_parent.model_config_id,
    coalesce(p_title, 'agent'), v_parent.workspace, '[]', v_parent.plan_mode, p_key, false);
  update chat_public.chats c set parent_chat_id = p_parent, mcp_server_ids = v_parent.mcp_server_ids
  where c.id = v_result.chat_id and c.parent_chat_id is null;
  return v_result.chat_id;
end;
$$;

-- FUNCTION chat_private start_batch_item(chat_public.batches, integer, jsonb, integer)
CREATE FUNCTION chat_private.start_batch_item(p_batch chat_public.batches, p_line integer, p_content jsonb, p_slot integer) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private start_turn(uuid, bigint, uuid)
CREATE FUNCTION chat_private.start_turn(p_chat_id uuid, p_input_message_id bigint, p_request_id uuid) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin perform chat_private._start_turn(p_chat_id, p_input_message_id, p_request_id); end $$;

-- FUNCTION chat_private sweep_batches(interval)
CREATE FUNCTION chat_private.sweep_batches(p_stale interval DEFAULT '00:00:30'::interval) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private sweep_expired_leases()
CREATE FUNCTION chat_private.sweep_expired_leases() RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat record;
  v_count integer := 0;
  v_recoveries integer;
  v_lease interval := make_interval(secs => chat_private.setting_int('lease_seconds'));
  v_epoch chat_private.server_epoch := chat_private._server_epoch();
  v_dead_workers text[];
  v_dead_runs bigint[];
begin
  for v_chat in
    select c.id, l.chat_id is not null as had_lease from chat_public.chats c
    left join chat_private.chat_leases l on l.chat_id = c.id
    where c.status in ('running', 'interrupting')
      and ((not chat_private.lease_row_is_live(l.expires_at)
            and (v_epoch.observed_at <= now() - v_lease
                 or exists (select 1 from chat_private.worker_processes w
                            where w.worker_id = l.worker_id and w.expires_at < v_epoch.last_seen_before)))
           or (l.chat_id is null and not exists (
                 select 1 from graphile_worker.jobs j
                 where j.key = 'chat:' || c.id
                   and (j.locked_at is null
                        or (j.locked_at > now() - v_lease
                            and not exists (select 1 from chat_private.worker_processes w
                                            where w.queue_id = j.locked_by and not chat_private.worker_row_is_live(w.expires_at)))))))
    for update of c skip locked
  loop
    v_count := v_count + 1;
    if v_chat.had_lease then
      update chat_private.turn_progress set recoveries = recoveries + 1
      where chat_id = v_chat.id and finished_at is null returning recoveries into v_recoveries;
      delete from chat_private.chat_leases l
      where l.chat_id = v_chat.id and not chat_private.lease_row_is_live(l.expires_at);
      if v_recoveries > chat_private.setting_int('max_recoveries_per_turn') then
        perform chat_private._begin_transition(v_chat.id, 'finish_error');
        perform chat_private._fail_turn(v_chat.id, 'recovery_limit',
          'the turn crashed its worker too many times and was stopped');
        perform chat_private.notify_chat(v_chat.id, 'error');
        continue;
      end if;
    end if;
    perform chat_private.enqueue_chat_run(v_chat.id);
  end loop;
  -- Jobs that dead workers hold (fetched, never finished) are unlocked through Graphile Worker's public API
  -- (force_unlock_workers: the other tasks' jobs run again now rather than after its four-hour lock timeout), and
  -- their chat_run jobs, which only wake chats the loop above has woken again, removed (complete_jobs, which takes
  -- unlocked jobs only: hence the ids first), so the queue shows each job once in its real state
  -- (chat_private.job_queue). Both in this transaction: no other worker fetches a job in between.
  select array_agg(w.queue_id) into v_dead_workers from chat_private.worker_processes w
  where not chat_private.worker_row_is_live(w.expires_at)
    and exists (select 1 from graphile_worker.jobs j where j.locked_by = w.queue_id);
  if v_dead_workers is not null then
    select array_agg(j.id) into v_dead_runs from graphile_worker.jobs j
    where j.task_identifier = 'chat_run' and j.locked_by = any(v_dead_workers);
    perform graphile_worker.force_unlock_workers(v_dead_workers);
    perform graphile_worker.complete_jobs(coalesce(v_dead_runs, '{}'));
  end if;
  delete from chat_private.worker_processes w
  where w.expires_at < now() - interval '1 hour'
    and not exists (select 1 from graphile_worker.jobs j where j.locked_by = w.queue_id);
  return v_count;
end;
$$;

-- FUNCTION chat_private tg_batches__webhook()
CREATE FUNCTION chat_private.tg_batches__webhook() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private.webhook_enqueue(new.owner_id,
    case new.status when 'completed' then 'batch.completed' when 'failed' then 'batch.failed' else 'batch.cancelled' end,
    'batch_' || replace(new.id::text, '-', ''), now());
  return null;
end;
$$;

-- FUNCTION chat_private tg_chat_messages__fence_delete()
CREATE FUNCTION chat_private.tg_chat_messages__fence_delete() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private._fence_history(changed.chat_id) from (select distinct chat_id from old_rows) changed;
  return null;
end;
$$;

-- FUNCTION chat_private tg_chat_messages__fence_update()
CREATE FUNCTION chat_private.tg_chat_messages__fence_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private._fence_history(changed.chat_id)
  from (select distinct n.chat_id from new_rows n join old_rows o on o.id = n.id
        where n.content is distinct from o.content or n.deleted is distinct from o.deleted) changed;
  return null;
end;
$$;

-- FUNCTION chat_private tg_chat_messages__guard_receipts()
CREATE FUNCTION chat_private.tg_chat_messages__guard_receipts() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if TG_OP = 'INSERT' then
    if NEW.kind = 'receipt' and coalesce(current_setting('chatd.writing_receipt', true), '') <> 'on' then
      raise exception 'receipts are written only by the structured-output transitions' using errcode = 'RCFRB';
    end if;
    return NEW;
  end if;
  if OLD.kind = 'receipt' and (
       NEW.chat_id is distinct from OLD.chat_id or NEW.role is distinct from OLD.role
    or NEW.visibility is distinct from OLD.visibility or NEW.kind is distinct from OLD.kind
    or NEW.content is distinct from OLD.content or NEW.structured_output is distinct from OLD.structured_output
    or NEW.structured_output_request_id is distinct from OLD.structured_output_request_id) then
    raise exception 'a receipt is immutable (only lifecycle flags may change)' using errcode = 'RCIMM';
  end if;
  if NEW.kind = 'receipt' and OLD.kind <> 'receipt' then
    raise exception 'a message cannot become a receipt' using errcode = 'RCFRB';
  end if;
  return NEW;
end;
$$;

-- FUNCTION chat_private tg_chat_messages__stamp_revision_and_fence_history()
CREATE FUNCTION chat_private.tg_chat_messages__stamp_revision_and_fence_history() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_chat record;
begin
  if TG_OP = 'INSERT' then
    if NEW.revision is not null then
      raise exception 'chat_messages.revision is assigned by the database' using errcode = 'RVMAN';
    end if;
  else
    if NEW.revision is distinct from OLD.revision then
      raise exception 'chat_messages.revision is assigned by the database' using errcode = 'RVMAN';
    end if;
    if NEW.chat_id is distinct from OLD.chat_id then
      raise exception 'a message cannot move to another chat' using errcode = 'MSIMM';
    end if;
  end if;
  select c.snapshot_version, c.history_version, c.generation_attempt into v_chat
  from chat_public.chats c where c.id = NEW.chat_id;
  NEW.revision := v_chat.snapshot_version;
  if TG_OP = 'INSERT' and NEW.kind <> 'receipt'
     and (v_chat.history_version is distinct from v_chat.snapshot_version or v_chat.generation_attempt <> 0) then
    perform chat_private._fence_history(NEW.chat_id);
  end if;
  return NEW;
end;
$$;

-- FUNCTION chat_private tg_chat_queued_messages__bump_queue_version()
CREATE FUNCTION chat_private.tg_chat_queued_messages__bump_queue_version() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update chat_public.chats c set queue_version = c.snapshot_version
  from (select chat_id from changed_rows) changed
  where c.id = changed.chat_id and c.queue_version is distinct from c.snapshot_version;
  return null;
end;
$$;

-- FUNCTION chat_private tg_chats__enqueue_run()
CREATE FUNCTION chat_private.tg_chats__enqueue_run() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private.enqueue_chat_run(NEW.id);
  return null;
end;
$$;

-- FUNCTION chat_private tg_chats__touch()
CREATE FUNCTION chat_private.tg_chats__touch() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  NEW.updated_at := pg_catalog.now();
  return NEW;
end;
$$;

-- FUNCTION chat_private tg_chats__webhook_function_calls()
CREATE FUNCTION chat_private.tg_chats__webhook_function_calls() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_request uuid := chat_private._active_request(new.id);
begin
  if v_request is not null then
    perform chat_private.webhook_enqueue(new.owner_id, 'response.completed', chat_private.webhook_response_subject(v_request),
      now());
  end if;
  return null;
end;
$$;

-- FUNCTION chat_private tg_structured_output_requests__finish_batch_item()
CREATE FUNCTION chat_private.tg_structured_output_requests__finish_batch_item() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_private tg_structured_output_requests__webhook()
CREATE FUNCTION chat_private.tg_structured_output_requests__webhook() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private.webhook_enqueue(c.owner_id, chat_private.webhook_response_event(new.status, new.error_code),
    chat_private.webhook_response_subject(new.id), coalesce(new.finished_at, now()))
  from chat_public.chats c
  where c.id = new.chat_id
    and exists (select 1 from chat_private.webhook_endpoints e where e.owner_id = c.owner_id and e.enabled);
  return null;
end;
$$;

-- FUNCTION chat_private tg_turn_progress__enqueue_run()
CREATE FUNCTION chat_private.tg_turn_progress__enqueue_run() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  if exists (select 1 from chat_public.chats where id = NEW.chat_id and status in ('running', 'interrupting')) then
    perform chat_private.enqueue_chat_run(NEW.chat_id);
  end if;
  return null;
end;
$$;

-- FUNCTION chat_private tg_webhook_endpoints__fail_pending_deliveries()
CREATE FUNCTION chat_private.tg_webhook_endpoints__fail_pending_deliveries() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update chat_private.webhook_deliveries set status = 'failed', next_attempt_at = null
  where endpoint_id = new.id and status = 'pending';
  return null;
end;
$$;

-- FUNCTION chat_private tg_worker_config__bump()
CREATE FUNCTION chat_private.tg_worker_config__bump() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update chat_private.worker_config_version set version = version + 1 where id;
  return null;
end;
$$;

-- FUNCTION chat_private transient_candidates(text, integer)
CREATE FUNCTION chat_private.transient_candidates(p_rule text, p_limit integer) RETURNS TABLE(owner_id uuid, key text, id bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_days integer;
begin
  v_days := chat_private.setting_int(case p_rule when 'idempotency_keys' then 'idempotency_key_days'
                                                 when 'webhook_deliveries' then 'webhook_delivery_days'
                                                 when 'failed_jobs' then 'failed_job_days' end);
  if coalesce(v_days, 0) <= 0 then
    return;
  end if;
  if p_rule = 'idempotency_keys' then
    return query select k.owner_id, k.key, null::bigint from chat_private.idempotency_keys k
      where k.created_at < now() - make_interval(days => v_days) and k.key not like 'batch:%' and k.key not like 'agent:%'
      order by k.created_at limit p_limit;
  elsif p_rule = 'webhook_deliveries' then
    return query select null::uuid, null::text, d.id from chat_private.webhook_deliveries d
      where d.created_at < now() - make_interval(days => v_days) and d.status <> 'pending'
      order by d.created_at limit p_limit;
  elsif p_rule = 'failed_jobs' then
    return query select null::uuid, null::text, j.id from graphile_worker.jobs j
      where j.attempts >= j.max_attempts and j.locked_at is null and j.updated_at < now() - make_interval(days => v_days)
      order by j.updated_at limit p_limit;
  end if;
end;
$$;

-- FUNCTION chat_private turn_state(uuid)
CREATE FUNCTION chat_private.turn_state(p_chat_id uuid) RETURNS json
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
$$;

-- FUNCTION chat_private webhook_add(uuid, text, text[], text)
CREATE FUNCTION chat_private.webhook_add(p_owner uuid, p_url text, p_events text[], p_secret text) RETURNS uuid
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  insert into chat_private.webhook_endpoints (owner_id, url, events, secret)
  values (p_owner, p_url, coalesce(p_events, array['response.completed', 'response.failed', 'response.cancelled',
    'response.incomplete']), p_secret)
  returning id;
$$;

-- FUNCTION chat_private webhook_check_url(text)
CREATE FUNCTION chat_private.webhook_check_url(p_url text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
begin
  if p_url is null or octet_length(p_url) > 2048 or p_url !~ '^https?://[^/?#@[:space:]]+([/?#][^[:space:]]*)?$' then
    raise exception 'url must be an absolute http(s) URL of at most 2048 bytes, without credentials'
      using errcode = 'CIINV', column = 'url';
  end if;
end;
$_$;

-- FUNCTION chat_private webhook_delivery_for_send(bigint)
CREATE FUNCTION chat_private.webhook_delivery_for_send(p_delivery_id bigint) RETURNS TABLE(event_id text, url text, body text, secrets text[], attempts integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select d.event_id, e.url, d.body,
         array_remove(array[e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end], null),
         d.attempts
  from chat_private.webhook_deliveries d join chat_private.webhook_endpoints e on e.id = d.endpoint_id
  where d.id = p_delivery_id and d.status = 'pending' and e.enabled;
$$;

-- FUNCTION chat_private webhook_enqueue(uuid, text, text, timestamp with time zone)
CREATE FUNCTION chat_private.webhook_enqueue(p_owner uuid, p_event text, p_subject text, p_created_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
    perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      p_run_at => now(), p_max_attempts => 3);
  end loop;
end;
$$;

-- FUNCTION chat_private webhook_list(uuid)
CREATE FUNCTION chat_private.webhook_list(p_owner uuid) RETURNS TABLE(id uuid, owner_id uuid, url text, events text[], enabled boolean, disabled_reason text, rotating boolean, created_at timestamp with time zone, pending bigint, delivered bigint, failed bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select e.id, e.owner_id, e.url, e.events, e.enabled, e.disabled_reason, coalesce(e.previous_secret_expires_at > now(), false),
         e.created_at,
         count(d.id) filter (where d.status = 'pending'), count(d.id) filter (where d.status = 'delivered'),
         count(d.id) filter (where d.status = 'failed')
  from chat_private.webhook_endpoints e left join chat_private.webhook_deliveries d on d.endpoint_id = e.id
  where p_owner is null or e.owner_id = p_owner
  group by e.id order by e.created_at, e.id;
$$;

-- FUNCTION chat_private webhook_own_endpoint(uuid)
CREATE FUNCTION chat_private.webhook_own_endpoint(p_id uuid) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform 1 from chat_private.webhook_endpoints e where e.id = p_id and e.owner_id = chat_private.require_user() for update;
  if not found then
    raise exception 'webhook endpoint not found' using errcode = 'WHNTF';
  end if;
  return p_id;
end;
$$;

-- FUNCTION chat_private webhook_record_attempt(bigint, integer, text, integer)
CREATE FUNCTION chat_private.webhook_record_attempt(p_delivery_id bigint, p_status_code integer, p_error text, p_retry_after_seconds integer) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
  -- Jitter, as Standard Webhooks recommends: up to a fifth later than the schedule, so the retries of deliveries that
  -- failed together (a receiver's outage) do not all arrive together. A Retry-After is honoured as asked.
  v_delay := greatest(v_delay * (1 + 0.2 * random()), make_interval(secs => least(coalesce(p_retry_after_seconds, 0), 86400)));
  update chat_private.webhook_deliveries set attempts = attempts + 1, next_attempt_at = now() + v_delay
  where id = p_delivery_id;
  perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    p_run_at => now() + v_delay, p_max_attempts => 3);
  return 'retry';
end;
$$;

-- FUNCTION chat_private webhook_remove(uuid)
CREATE FUNCTION chat_private.webhook_remove(p_endpoint uuid) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  delete from chat_private.webhook_endpoints where id = p_endpoint returning true;
$$;

-- FUNCTION chat_private webhook_replay(bigint)
CREATE FUNCTION chat_private.webhook_replay(p_delivery_id bigint) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  update chat_private.webhook_deliveries d set status = 'pending', next_attempt_at = now()
  from chat_private.webhook_endpoints e
  where d.id = p_delivery_id and e.id = d.endpoint_id and e.enabled;
  if not found then
    return false;
  end if;
  perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', p_delivery_id),
    p_run_at => now(), p_max_attempts => 3);
  return true;
end;
$$;

-- FUNCTION chat_private webhook_response_event(chat_public.structured_output_status, text)
CREATE FUNCTION chat_private.webhook_response_event(p_status chat_public.structured_output_status, p_code text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select case
    when p_status = 'succeeded' or p_code = 'refused' then 'response.completed'
    when p_status = 'failed' then 'response.failed'
    else 'response.cancelled' end;
$$;

-- FUNCTION chat_private webhook_response_subject(uuid)
CREATE FUNCTION chat_private.webhook_response_subject(p_request_id uuid) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  return 'resp_' || replace(coalesce((select x.id from chat_private.openai_response_rounds x
                                      where x.request_id = p_request_id order by x.round desc limit 1),
                                     p_request_id)::text, '-', '');
end;
$$;

-- FUNCTION chat_private webhook_retry_delay(integer)
CREATE FUNCTION chat_private.webhook_retry_delay(p_attempts integer) RETURNS interval
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select (array['5 seconds', '5 minutes', '30 minutes', '2 hours', '5 hours', '10 hours', '14 hours', '20 hours',
                '24 hours']::interval[])[p_attempts];
$$;

-- FUNCTION chat_private webhook_rotate(uuid, text, interval)
CREATE FUNCTION chat_private.webhook_rotate(p_endpoint uuid, p_secret text, p_overlap interval) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  update chat_private.webhook_endpoints
  set previous_secret = case when p_overlap > interval '0' then secret end,
      previous_secret_expires_at = case when p_overlap > interval '0' then now() + p_overlap end,
      secret = p_secret
  where id = p_endpoint
  returning true;
$$;

-- FUNCTION chat_private webhook_sweep(interval)
CREATE FUNCTION chat_private.webhook_sweep(p_stale interval DEFAULT '00:01:00'::interval) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_delivery bigint;
  v_count integer := 0;
begin
  for v_delivery in
    select d.id from chat_private.webhook_deliveries d
    where d.status = 'pending' and d.next_attempt_at <= now() - p_stale
    for update of d skip locked
  loop
    perform chat_private.add_job('webhook_deliver', json_build_object('delivery_id', v_delivery),
      p_job_key => 'webhook-sweep:' || v_delivery, p_max_attempts => 3);
    update chat_private.webhook_deliveries set next_attempt_at = now() where id = v_delivery;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- FUNCTION chat_private worker_message_kind(jsonb)
CREATE FUNCTION chat_private.worker_message_kind(p_item jsonb) RETURNS chat_public.message_kind
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if coalesce(p_item ->> 'kind', 'message') not in ('message', 'control', 'summary') then
    raise exception 'workers cannot insert % rows', p_item ->> 'kind' using errcode = 'RCFRB';
  end if;
  return coalesce(p_item ->> 'kind', 'message')::chat_public.message_kind;
end;
$$;

-- FUNCTION chat_private worker_row_is_live(timestamp with time zone)
CREATE FUNCTION chat_private.worker_row_is_live(p_expires_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select p_expires_at > now();
$$;

-- FUNCTION chat_private write_receipt(uuid, chat_public.structured_output_status, text, text, jsonb)
CREATE FUNCTION chat_private.write_receipt(p_request_id uuid, p_status chat_public.structured_output_status, p_code text DEFAULT NULL::text, p_message text DEFAULT NULL::text, p_value jsonb DEFAULT NULL::jsonb) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
begin return chat_private._write_receipt(p_request_id, p_status, p_code, p_message, p_value); end $$;

-- FUNCTION chat_public add_webhook_endpoint(text, text[])
CREATE FUNCTION chat_public.add_webhook_endpoint(url text, events text[] DEFAULT NULL::text[]) RETURNS chat_public.webhook_endpoint_secret
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_private.require_user();
  v_secret text := 'whsec_' || encode(gen_random_bytes(32), 'base64');
  v_events text[] := coalesce(add_webhook_endpoint.events, array['response.completed', 'response.failed',
    'response.cancelled', 'response.incomplete']);
  v_id uuid;
begin
  perform chat_private.webhook_check_url(add_webhook_endpoint.url);
  if cardinality(v_events) = 0 or not v_events <@ array['response.completed', 'response.failed', 'response.cancelled',
       'response.incomplete', 'batch.completed', 'batch.failed', 'batch.cancelled'] then
    raise exception 'events must be some of response.completed, response.failed, response.cancelled, response.incomplete, batch.completed, batch.failed, batch.cancelled'
      using errcode = 'CIINV', column = 'events';
  end if;
  -- Serializes one user's adds, so two at once cannot both pass the cap.
  perform 1 from chat_public.users u where u.id = v_user for update;
  if (select count(*) from chat_private.webhook_endpoints e where e.owner_id = v_user) >= 16 then
    raise exception 'a user has at most 16 webhook endpoints; remove one first' using errcode = 'CIINV', column = 'url';
  end if;
  v_id := chat_private.webhook_add(v_user, add_webhook_endpoint.url, v_events, v_secret);
  return (v_id, v_secret)::chat_public.webhook_endpoint_secret;
end;
$$;

-- FUNCTION chat_public archive_chat(uuid, boolean)
CREATE FUNCTION chat_public.archive_chat(chat_id uuid, archived boolean DEFAULT true) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform chat_private._begin_transition(archive_chat.chat_id,
    case when coalesce(archived, true) then 'archive' else 'unarchive' end, v_user);
  update chat_public.chats c set archived = coalesce(archive_chat.archived, true) where c.id = archive_chat.chat_id;
  perform chat_private.notify_chat(archive_chat.chat_id, 'status');
  return (select c from chat_public.chats c where c.id = archive_chat.chat_id);
end;
$$;

-- FUNCTION chat_public batches_item_counts(chat_public.batches)
CREATE FUNCTION chat_public.batches_item_counts(b chat_public.batches) RETURNS chat_public.batch_item_counts
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select count(*) filter (where status = 'pending')::integer, count(*) filter (where status = 'running')::integer,
         count(*) filter (where status = 'succeeded')::integer, count(*) filter (where status = 'failed')::integer,
         count(*) filter (where status = 'canceled')::integer
  from chat_public.batch_items where batch_id = b.id;
$$;

-- FUNCTION chat_public cancel_batch(uuid)
CREATE FUNCTION chat_public.cancel_batch(batch_id uuid) RETURNS chat_public.batches
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select * from chat_private.cancel_batch_as(cancel_batch.batch_id, chat_private.require_user(), 'canceled by its owner');
$$;

-- FUNCTION chat_public chat_input_result_chat(chat_public.chat_input_result)
CREATE FUNCTION chat_public.chat_input_result_chat(r chat_public.chat_input_result) RETURNS chat_public.chats
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select c.* from chat_public.chats c where c.id = r.chat_id;
$$;

-- FUNCTION chat_public chat_input_result_message(chat_public.chat_input_result)
CREATE FUNCTION chat_public.chat_input_result_message(r chat_public.chat_input_result) RETURNS chat_public.chat_messages
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select m.* from chat_public.chat_messages m where m.id = r.message_id;
$$;

-- FUNCTION chat_public chat_input_result_queued_message(chat_public.chat_input_result)
CREATE FUNCTION chat_public.chat_input_result_queued_message(r chat_public.chat_input_result) RETURNS chat_public.chat_queued_messages
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select q.* from chat_public.chat_queued_messages q where q.id = r.queued_message_id;
$$;

-- FUNCTION chat_public chat_input_result_receipts(chat_public.chat_input_result)
CREATE FUNCTION chat_public.chat_input_result_receipts(r chat_public.chat_input_result) RETURNS chat_public.chat_messages[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce(array_agg(m order by m.id), '{}') from chat_public.chat_messages m where m.id = any (r.receipt_message_ids);
$$;

-- FUNCTION chat_public chat_input_result_structured_output_request(chat_public.chat_input_result)
CREATE FUNCTION chat_public.chat_input_result_structured_output_request(r chat_public.chat_input_result) RETURNS chat_public.structured_output_requests
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select s.* from chat_public.structured_output_requests s where s.id = r.structured_output_request_id;
$$;

-- FUNCTION chat_public chat_messages_structured_output(chat_public.chat_messages)
CREATE FUNCTION chat_public.chat_messages_structured_output(m chat_public.chat_messages) RETURNS chat_public.structured_output
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public chats_messages(chat_public.chats, bigint, bigint)
CREATE FUNCTION chat_public.chats_messages(c chat_public.chats, after_id bigint DEFAULT NULL::bigint, before_id bigint DEFAULT NULL::bigint) RETURNS SETOF chat_public.chat_messages
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select m.* from chat_public.chat_messages m
  where m.chat_id = c.id and (after_id is null or m.id > after_id) and (before_id is null or m.id < before_id)
  order by m.id;
$$;

-- FUNCTION chat_public chats_pending_structured_requests(chat_public.chats)
CREATE FUNCTION chat_public.chats_pending_structured_requests(c chat_public.chats) RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select count(*)::int from chat_public.structured_output_requests r where r.chat_id = c.id and r.status = 'pending';
$$;

-- FUNCTION chat_public chats_queue(chat_public.chats)
CREATE FUNCTION chat_public.chats_queue(c chat_public.chats) RETURNS chat_public.chat_queued_messages[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select coalesce(array_agg(q order by q.position), '{}') from chat_public.chat_queued_messages q where q.chat_id = c.id;
$$;

-- FUNCTION chat_public compact_chat(uuid)
CREATE FUNCTION chat_public.compact_chat(chat_id uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public create_batch(text, jsonb, text, text, text, integer, text)
CREATE FUNCTION chat_public.create_batch(response_format text, items jsonb, name text DEFAULT NULL::text, model_config_id text DEFAULT NULL::text, workspace text DEFAULT NULL::text, concurrency integer DEFAULT 4, idempotency_key text DEFAULT NULL::text) RETURNS chat_public.batches
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select * from chat_private.insert_batch(chat_private.require_user(),
    chat_private.parse_response_format(create_batch.response_format), create_batch.items, create_batch.name,
    create_batch.model_config_id, create_batch.workspace, create_batch.concurrency, create_batch.idempotency_key);
$$;

-- FUNCTION chat_public create_chat(jsonb, text, text, text, text, jsonb, boolean, text)
CREATE FUNCTION chat_public.create_chat(content jsonb, response_format text DEFAULT NULL::text, model_config_id text DEFAULT NULL::text, title text DEFAULT NULL::text, workspace text DEFAULT NULL::text, dynamic_tools jsonb DEFAULT '[]'::jsonb, plan_mode boolean DEFAULT false, idempotency_key text DEFAULT NULL::text) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform chat_private.check_client_key(idempotency_key);
  return chat_private.create_chat_as(v_user, content, chat_private.parse_response_format(response_format),
    model_config_id, title, workspace, dynamic_tools, plan_mode, idempotency_key);
end;
$$;

-- FUNCTION chat_public current_user_id()
CREATE FUNCTION chat_public.current_user_id() RETURNS uuid
    LANGUAGE sql STABLE
    AS $_$
  select case when pg_catalog.current_setting('jwt.claims.sub', true)
                   operator(pg_catalog.~) '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
              then pg_catalog.current_setting('jwt.claims.sub', true)::pg_catalog.uuid end;
$_$;

-- FUNCTION chat_public delete_chat(uuid)
CREATE FUNCTION chat_public.delete_chat(chat_id uuid) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_private.require_user();
begin
  perform 1 from chat_public.chats c where c.id = delete_chat.chat_id and c.owner_id = v_user for update;
  if not found then
    raise exception 'chat not found' using errcode = 'CHNTF', column = 'chat_id';
  end if;
  perform chat_private._delete_chats(array[delete_chat.chat_id]);
  return delete_chat.chat_id;
end;
$$;

-- FUNCTION chat_public delete_queued_message(bigint)
CREATE FUNCTION chat_public.delete_queued_message(queued_message_id bigint) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public edit_chat_message(bigint, jsonb, text, text, bigint)
CREATE FUNCTION chat_public.edit_chat_message(message_id bigint, content jsonb, response_format text DEFAULT NULL::text, preserve_schema_sha256 text DEFAULT NULL::text, preserve_history_version bigint DEFAULT NULL::bigint) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public edit_message(bigint, jsonb, text)
CREATE FUNCTION chat_public.edit_message(message_id bigint, content jsonb, response_format text DEFAULT NULL::text) RETURNS chat_public.chat_input_result
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select * from chat_public.edit_chat_message(edit_message.message_id, edit_message.content, edit_message.response_format,
    null, null);
$$;

-- FUNCTION chat_public find_structured_output_request(uuid)
CREATE FUNCTION chat_public.find_structured_output_request(request_id uuid) RETURNS chat_public.structured_output_requests
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_private.require_user();
  v_request chat_public.structured_output_requests;
begin
  select r.* into v_request from chat_public.structured_output_requests r join chat_public.chats c on c.id = r.chat_id
  where r.id = find_structured_output_request.request_id and c.owner_id = v_user;
  if found then
    return v_request;
  end if;
  if exists (select 1 from chat_private.deleted_requests d
             where d.id = find_structured_output_request.request_id and d.owner_id = v_user) then
    raise exception 'structured output request deleted with its chat' using errcode = 'SODEL', column = 'request_id';
  end if;
  raise exception 'structured output request not found' using errcode = 'SONTF', column = 'request_id';
end;
$$;

-- FUNCTION chat_public interrupt_chat(uuid)
CREATE FUNCTION chat_public.interrupt_chat(chat_id uuid) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public openai_cancel_response(uuid)
CREATE FUNCTION chat_public.openai_cancel_response(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public openai_continue_response(uuid, jsonb, jsonb, boolean, jsonb, text, text)
CREATE FUNCTION chat_public.openai_continue_response(p_previous uuid, p_results jsonb, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public openai_create_response(jsonb, text, text, text, jsonb, boolean, jsonb, text, text)
CREATE FUNCTION chat_public.openai_create_response(p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public openai_follow_up_response(uuid, jsonb, text, text, text, jsonb, boolean, jsonb, text, text)
CREATE FUNCTION chat_public.openai_follow_up_response(p_previous uuid, p_content jsonb, p_response_format text, p_model text, p_workspace text, p_tools jsonb, p_background boolean, p_echo jsonb, p_body_sha256 text, p_idempotency_key text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public openai_response(uuid)
CREATE FUNCTION chat_public.openai_response(p_id uuid) RETURNS TABLE(response_id uuid, previous_response_id uuid, request_id uuid, chat_id uuid, created_at timestamp with time zone, finished_at timestamp with time zone, status text, error_code text, error_message text, value_json text, input_tokens bigint, output_tokens bigint, model_config_id text, chat_status text, queued boolean, background boolean, echo jsonb, function_calls jsonb, calls_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public promote_queued_message(bigint)
CREATE FUNCTION chat_public.promote_queued_message(queued_message_id bigint) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public remove_webhook_endpoint(uuid)
CREATE FUNCTION chat_public.remove_webhook_endpoint(endpoint_id uuid) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
begin
  perform chat_private.webhook_remove(chat_private.webhook_own_endpoint(remove_webhook_endpoint.endpoint_id));
  return remove_webhook_endpoint.endpoint_id;
end;
$$;

-- FUNCTION chat_public rotate_webhook_endpoint_secret(uuid, integer)
CREATE FUNCTION chat_public.rotate_webhook_endpoint_secret(endpoint_id uuid, overlap_hours integer DEFAULT 24) RETURNS chat_public.webhook_endpoint_secret
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_secret text := 'whsec_' || encode(gen_random_bytes(32), 'base64');
begin
  if overlap_hours is null or overlap_hours < 0 or overlap_hours > 168 then
    raise exception 'overlap_hours must be between 0 and 168' using errcode = 'CIINV', column = 'overlap_hours';
  end if;
  perform chat_private.webhook_rotate(chat_private.webhook_own_endpoint(rotate_webhook_endpoint_secret.endpoint_id),
    v_secret, make_interval(hours => overlap_hours));
  return (rotate_webhook_endpoint_secret.endpoint_id, v_secret)::chat_public.webhook_endpoint_secret;
end;
$$;

-- FUNCTION chat_public send_chat_message(uuid, jsonb, text, text, text)
CREATE FUNCTION chat_public.send_chat_message(chat_id uuid, content jsonb, response_format text DEFAULT NULL::text, busy_behavior text DEFAULT 'queue'::text, idempotency_key text DEFAULT NULL::text) RETURNS chat_public.chat_input_result
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
$$;

-- FUNCTION chat_public send_message(uuid, jsonb, text, chat_public.busy_behavior, text)
CREATE FUNCTION chat_public.send_message(chat_id uuid, content jsonb, response_format text DEFAULT NULL::text, busy_behavior chat_public.busy_behavior DEFAULT 'queue'::chat_public.busy_behavior, idempotency_key text DEFAULT NULL::text) RETURNS chat_public.chat_input_result
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select * from chat_public.send_chat_message(send_message.chat_id, send_message.content, send_message.response_format,
    coalesce(send_message.busy_behavior, 'queue')::text, send_message.idempotency_key);
$$;

-- FUNCTION chat_public set_chat_mcp_servers(uuid, text[])
CREATE FUNCTION chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
declare
  v_user uuid := chat_private.require_user();
  v_ids text[] := coalesce(server_ids, '{}');
  v_unknown text;
begin
  if cardinality(v_ids) > 16 or (select count(distinct i) from unnest(v_ids) i) <> cardinality(v_ids) then
    raise exception 'server_ids holds at most 16 distinct ids' using errcode = 'CIINV', column = 'server_ids';
  end if;
  perform chat_private._begin_transition(set_chat_mcp_servers.chat_id, 'set_mcp_servers', v_user);
  select i into v_unknown from unnest(v_ids) i
  where not exists (select 1 from chat_private.mcp_servers s where s.id = i and s.enabled) limit 1;
  if v_unknown is not null then
    raise exception 'unknown or disabled MCP server: %', v_unknown using errcode = 'CIINV', column = 'server_ids';
  end if;
  update chat_public.chats c set mcp_server_ids = v_ids where c.id = set_chat_mcp_servers.chat_id;
  perform chat_private.notify_chat(set_chat_mcp_servers.chat_id, 'status');
  return (select c from chat_public.chats c where c.id = set_chat_mcp_servers.chat_id);
end;
$$;

-- FUNCTION chat_public set_chat_plan_mode(uuid, boolean)
CREATE FUNCTION chat_public.set_chat_plan_mode(chat_id uuid, enabled boolean) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public structured_output_enabled()
CREATE FUNCTION chat_public.structured_output_enabled() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select chat_private.experiment_enabled('chat-structured-output');
$$;

-- FUNCTION chat_public submit_tool_results(uuid, jsonb)
CREATE FUNCTION chat_public.submit_tool_results(chat_id uuid, results jsonb) RETURNS chat_public.chats
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
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
$$;

-- FUNCTION chat_public webhook_endpoints()
CREATE FUNCTION chat_public.webhook_endpoints() RETURNS SETOF chat_public.webhook_endpoint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
  select l.id, l.url, l.events, l.enabled, l.disabled_reason, l.rotating, l.created_at, l.pending, l.delivered, l.failed
  from chat_private.webhook_list(chat_private.require_user()) l;
$$;

-- INDEX chat_private deleted_requests_deleted_at
CREATE INDEX deleted_requests_deleted_at ON chat_private.deleted_requests USING btree (deleted_at);

-- INDEX chat_private deleted_requests_owner
CREATE INDEX deleted_requests_owner ON chat_private.deleted_requests USING btree (owner_id);

-- INDEX chat_private idempotency_keys_created_at
CREATE INDEX idempotency_keys_created_at ON chat_private.idempotency_keys USING btree (created_at);

-- INDEX chat_private idempotency_keys_result_chat
CREATE INDEX idempotency_keys_result_chat ON chat_private.idempotency_keys USING btree (((result ->> 'chat_id'::text)));

-- INDEX chat_private model_configs_one_default
CREATE UNIQUE INDEX model_configs_one_default ON chat_private.model_configs USING btree (is_default) WHERE is_default;

-- INDEX chat_private openai_responses_chat
CREATE INDEX openai_responses_chat ON chat_private.openai_responses USING btree (chat_id);

-- INDEX chat_private turn_progress_chat
CREATE INDEX turn_progress_chat ON chat_private.turn_progress USING btree (chat_id);

-- INDEX chat_private turn_progress_input_message
CREATE INDEX turn_progress_input_message ON chat_private.turn_progress USING btree (input_message_id);

-- INDEX chat_private turn_progress_one_open_turn
CREATE UNIQUE INDEX turn_progress_one_open_turn ON chat_private.turn_progress USING btree (chat_id) WHERE (finished_at IS NULL);

-- INDEX chat_private turn_progress_request
CREATE INDEX turn_progress_request ON chat_private.turn_progress USING btree (structured_output_request_id) WHERE (structured_output_request_id IS NOT NULL);

-- INDEX chat_private webhook_deliveries_created_at
CREATE INDEX webhook_deliveries_created_at ON chat_private.webhook_deliveries USING btree (created_at);

-- INDEX chat_private webhook_deliveries_endpoint
CREATE INDEX webhook_deliveries_endpoint ON chat_private.webhook_deliveries USING btree (endpoint_id, id);

-- INDEX chat_private webhook_deliveries_subject
CREATE INDEX webhook_deliveries_subject ON chat_private.webhook_deliveries USING btree (subject_id);

-- INDEX chat_private webhook_endpoints_owner
CREATE INDEX webhook_endpoints_owner ON chat_private.webhook_endpoints USING btree (owner_id);

-- INDEX chat_public batch_items_chat
CREATE INDEX batch_items_chat ON chat_public.batch_items USING btree (chat_id) WHERE (chat_id IS NOT NULL);

-- INDEX chat_public batch_items_pending
CREATE INDEX batch_items_pending ON chat_public.batch_items USING btree (batch_id, line) WHERE (status = 'pending'::chat_public.batch_item_status);

-- INDEX chat_public batch_items_running
CREATE INDEX batch_items_running ON chat_public.batch_items USING btree (batch_id) WHERE (status = 'running'::chat_public.batch_item_status);

-- INDEX chat_public batch_items_slot
CREATE UNIQUE INDEX batch_items_slot ON chat_public.batch_items USING btree (batch_id, slot) WHERE (status = 'running'::chat_public.batch_item_status);

-- INDEX chat_public batches_active
CREATE INDEX batches_active ON chat_public.batches USING btree (status) WHERE (status = ANY (ARRAY['validating'::chat_public.batch_status, 'running'::chat_public.batch_status, 'canceled'::chat_public.batch_status]));

-- INDEX chat_public batches_finished
CREATE INDEX batches_finished ON chat_public.batches USING btree (finished_at) WHERE (finished_at IS NOT NULL);

-- INDEX chat_public batches_owner
CREATE INDEX batches_owner ON chat_public.batches USING btree (owner_id, created_at DESC);

-- INDEX chat_public chat_messages_chat
CREATE INDEX chat_messages_chat ON chat_public.chat_messages USING btree (chat_id, id);

-- INDEX chat_public chat_messages_created_by
CREATE INDEX chat_messages_created_by ON chat_public.chat_messages USING btree (created_by) WHERE (created_by IS NOT NULL);

-- INDEX chat_public chat_messages_one_receipt_per_request
CREATE UNIQUE INDEX chat_messages_one_receipt_per_request ON chat_public.chat_messages USING btree (structured_output_request_id) WHERE (kind = 'receipt'::chat_public.message_kind);

-- INDEX chat_public chat_messages_request
CREATE INDEX chat_messages_request ON chat_public.chat_messages USING btree (structured_output_request_id) WHERE (structured_output_request_id IS NOT NULL);

-- INDEX chat_public chat_queued_messages_created_by
CREATE INDEX chat_queued_messages_created_by ON chat_public.chat_queued_messages USING btree (created_by) WHERE (created_by IS NOT NULL);

-- INDEX chat_public chat_queued_messages_order
CREATE INDEX chat_queued_messages_order ON chat_public.chat_queued_messages USING btree (chat_id, "position");

-- INDEX chat_public chats_owner
CREATE INDEX chats_owner ON chat_public.chats USING btree (owner_id, created_at DESC);

-- INDEX chat_public chats_parent
CREATE INDEX chats_parent ON chat_public.chats USING btree (parent_chat_id) WHERE (parent_chat_id IS NOT NULL);

-- INDEX chat_public chats_runnable
CREATE INDEX chats_runnable ON chat_public.chats USING btree (id) WHERE (status = ANY (ARRAY['running'::chat_public.chat_status, 'interrupting'::chat_public.chat_status]));

-- INDEX chat_public structured_output_requests_chat
CREATE INDEX structured_output_requests_chat ON chat_public.structured_output_requests USING btree (chat_id);

-- INDEX chat_public structured_output_requests_pending
CREATE INDEX structured_output_requests_pending ON chat_public.structured_output_requests USING btree (chat_id) WHERE (status = 'pending'::chat_public.structured_output_status);

-- POLICY chat_private chat_leases select_all_operator
CREATE POLICY select_all_operator ON chat_private.chat_leases FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private chat_leases select_all_worker
CREATE POLICY select_all_worker ON chat_private.chat_leases FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private deleted_requests select_all_operator
CREATE POLICY select_all_operator ON chat_private.deleted_requests FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private experiments select_all_operator
CREATE POLICY select_all_operator ON chat_private.experiments FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private experiments select_all_worker
CREATE POLICY select_all_worker ON chat_private.experiments FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private idempotency_keys select_all_operator
CREATE POLICY select_all_operator ON chat_private.idempotency_keys FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private idempotency_keys select_all_worker
CREATE POLICY select_all_worker ON chat_private.idempotency_keys FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private mcp_server_secrets select_all_worker
CREATE POLICY select_all_worker ON chat_private.mcp_server_secrets FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private mcp_servers select_all_operator
CREATE POLICY select_all_operator ON chat_private.mcp_servers FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private mcp_servers select_all_worker
CREATE POLICY select_all_worker ON chat_private.mcp_servers FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private message_internals select_all_operator
CREATE POLICY select_all_operator ON chat_private.message_internals FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private message_internals select_all_worker
CREATE POLICY select_all_worker ON chat_private.message_internals FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private model_config_secrets select_all_worker
CREATE POLICY select_all_worker ON chat_private.model_config_secrets FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private model_config_secrets write_worker
CREATE POLICY write_worker ON chat_private.model_config_secrets TO chat_worker USING (true) WITH CHECK (true);

-- POLICY chat_private model_configs select_all_operator
CREATE POLICY select_all_operator ON chat_private.model_configs FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private model_configs select_all_worker
CREATE POLICY select_all_worker ON chat_private.model_configs FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private model_configs write_worker
CREATE POLICY write_worker ON chat_private.model_configs TO chat_worker USING (true) WITH CHECK (true);

-- POLICY chat_private openai_response_rounds select_all_operator
CREATE POLICY select_all_operator ON chat_private.openai_response_rounds FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private openai_responses select_all_operator
CREATE POLICY select_all_operator ON chat_private.openai_responses FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private server_epoch select_all_operator
CREATE POLICY select_all_operator ON chat_private.server_epoch FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private settings select_all_operator
CREATE POLICY select_all_operator ON chat_private.settings FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private settings select_all_worker
CREATE POLICY select_all_worker ON chat_private.settings FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private stop_hook_secrets select_all_worker
CREATE POLICY select_all_worker ON chat_private.stop_hook_secrets FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private stop_hooks select_all_operator
CREATE POLICY select_all_operator ON chat_private.stop_hooks FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private stop_hooks select_all_worker
CREATE POLICY select_all_worker ON chat_private.stop_hooks FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private transition_rules select_all_operator
CREATE POLICY select_all_operator ON chat_private.transition_rules FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private transition_rules select_all_worker
CREATE POLICY select_all_worker ON chat_private.transition_rules FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private turn_progress select_all_operator
CREATE POLICY select_all_operator ON chat_private.turn_progress FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private turn_progress select_all_worker
CREATE POLICY select_all_worker ON chat_private.turn_progress FOR SELECT TO chat_worker USING (true);

-- POLICY chat_private webhook_attempts select_all_operator
CREATE POLICY select_all_operator ON chat_private.webhook_attempts FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private webhook_deliveries select_all_operator
CREATE POLICY select_all_operator ON chat_private.webhook_deliveries FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private worker_config_version select_all_operator
CREATE POLICY select_all_operator ON chat_private.worker_config_version FOR SELECT TO chat_operator USING (true);

-- POLICY chat_private worker_config_version select_all_worker
CREATE POLICY select_all_worker ON chat_private.worker_config_version FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public batch_items select_all_operator
CREATE POLICY select_all_operator ON chat_public.batch_items FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public batch_items select_all_worker
CREATE POLICY select_all_worker ON chat_public.batch_items FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public batch_items select_own
CREATE POLICY select_own ON chat_public.batch_items FOR SELECT TO chat_user USING ((EXISTS ( SELECT 1
   FROM chat_public.batches b
  WHERE ((b.id = batch_items.batch_id) AND (b.owner_id = chat_public.current_user_id())))));

-- POLICY chat_public batches select_all_operator
CREATE POLICY select_all_operator ON chat_public.batches FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public batches select_all_worker
CREATE POLICY select_all_worker ON chat_public.batches FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public batches select_own
CREATE POLICY select_own ON chat_public.batches FOR SELECT TO chat_user USING ((owner_id = chat_public.current_user_id()));

-- POLICY chat_public chat_messages select_all_operator
CREATE POLICY select_all_operator ON chat_public.chat_messages FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public chat_messages select_all_worker
CREATE POLICY select_all_worker ON chat_public.chat_messages FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public chat_messages select_own
CREATE POLICY select_own ON chat_public.chat_messages FOR SELECT TO chat_user USING (((visibility = ANY (ARRAY['user'::chat_public.message_visibility, 'both'::chat_public.message_visibility])) AND ((NOT deleted) OR (kind = 'receipt'::chat_public.message_kind)) AND (EXISTS ( SELECT 1
   FROM chat_public.chats c
  WHERE ((c.id = chat_messages.chat_id) AND (c.owner_id = chat_public.current_user_id()))))));

-- POLICY chat_public chat_queued_messages select_all_operator
CREATE POLICY select_all_operator ON chat_public.chat_queued_messages FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public chat_queued_messages select_all_worker
CREATE POLICY select_all_worker ON chat_public.chat_queued_messages FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public chat_queued_messages select_own
CREATE POLICY select_own ON chat_public.chat_queued_messages FOR SELECT TO chat_user USING ((EXISTS ( SELECT 1
   FROM chat_public.chats c
  WHERE ((c.id = chat_queued_messages.chat_id) AND (c.owner_id = chat_public.current_user_id())))));

-- POLICY chat_public chats select_all_operator
CREATE POLICY select_all_operator ON chat_public.chats FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public chats select_all_worker
CREATE POLICY select_all_worker ON chat_public.chats FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public chats select_own
CREATE POLICY select_own ON chat_public.chats FOR SELECT TO chat_user USING ((owner_id = chat_public.current_user_id()));

-- POLICY chat_public structured_output_requests select_all_operator
CREATE POLICY select_all_operator ON chat_public.structured_output_requests FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public structured_output_requests select_all_worker
CREATE POLICY select_all_worker ON chat_public.structured_output_requests FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public structured_output_requests select_own
CREATE POLICY select_own ON chat_public.structured_output_requests FOR SELECT TO chat_user USING ((EXISTS ( SELECT 1
   FROM chat_public.chats c
  WHERE ((c.id = structured_output_requests.chat_id) AND (c.owner_id = chat_public.current_user_id())))));

-- POLICY chat_public users insert_operator
CREATE POLICY insert_operator ON chat_public.users FOR INSERT TO chat_operator WITH CHECK (true);

-- POLICY chat_public users select_all_operator
CREATE POLICY select_all_operator ON chat_public.users FOR SELECT TO chat_operator USING (true);

-- POLICY chat_public users select_all_worker
CREATE POLICY select_all_worker ON chat_public.users FOR SELECT TO chat_worker USING (true);

-- POLICY chat_public users select_own
CREATE POLICY select_own ON chat_public.users FOR SELECT TO chat_user USING ((id = chat_public.current_user_id()));

-- ROW SECURITY chat_private chat_leases
ALTER TABLE chat_private.chat_leases ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private deleted_requests
ALTER TABLE chat_private.deleted_requests ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private experiments
ALTER TABLE chat_private.experiments ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private idempotency_keys
ALTER TABLE chat_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private mcp_server_secrets
ALTER TABLE chat_private.mcp_server_secrets ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private mcp_servers
ALTER TABLE chat_private.mcp_servers ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private message_internals
ALTER TABLE chat_private.message_internals ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private model_config_secrets
ALTER TABLE chat_private.model_config_secrets ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private model_configs
ALTER TABLE chat_private.model_configs ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private openai_response_rounds
ALTER TABLE chat_private.openai_response_rounds ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private openai_responses
ALTER TABLE chat_private.openai_responses ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private server_epoch
ALTER TABLE chat_private.server_epoch ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private settings
ALTER TABLE chat_private.settings ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private stop_hook_secrets
ALTER TABLE chat_private.stop_hook_secrets ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private stop_hooks
ALTER TABLE chat_private.stop_hooks ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private transition_rules
ALTER TABLE chat_private.transition_rules ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private turn_progress
ALTER TABLE chat_private.turn_progress ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private webhook_attempts
ALTER TABLE chat_private.webhook_attempts ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private webhook_deliveries
ALTER TABLE chat_private.webhook_deliveries ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private webhook_endpoints
ALTER TABLE chat_private.webhook_endpoints ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_private worker_config_version
ALTER TABLE chat_private.worker_config_version ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public batch_items
ALTER TABLE chat_public.batch_items ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public batches
ALTER TABLE chat_public.batches ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public chat_messages
ALTER TABLE chat_public.chat_messages ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public chat_queued_messages
ALTER TABLE chat_public.chat_queued_messages ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public chats
ALTER TABLE chat_public.chats ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public structured_output_requests
ALTER TABLE chat_public.structured_output_requests ENABLE ROW LEVEL SECURITY;

-- ROW SECURITY chat_public users
ALTER TABLE chat_public.users ENABLE ROW LEVEL SECURITY;

-- SCHEMA - chat_private
CREATE SCHEMA chat_private;

-- SCHEMA - chat_public
CREATE SCHEMA chat_public;

-- SEQUENCE OWNED BY chat_private turn_progress_id_seq
ALTER SEQUENCE chat_private.turn_progress_id_seq OWNED BY chat_private.turn_progress.id;

-- SEQUENCE OWNED BY chat_public chat_messages_id_seq
ALTER SEQUENCE chat_public.chat_messages_id_seq OWNED BY chat_public.chat_messages.id;

-- SEQUENCE OWNED BY chat_public chat_queued_messages_id_seq
ALTER SEQUENCE chat_public.chat_queued_messages_id_seq OWNED BY chat_public.chat_queued_messages.id;

-- SEQUENCE chat_private turn_progress_id_seq
CREATE SEQUENCE chat_private.turn_progress_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- SEQUENCE chat_private webhook_deliveries_id_seq
ALTER TABLE chat_private.webhook_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME chat_private.webhook_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- SEQUENCE chat_public chat_messages_id_seq
CREATE SEQUENCE chat_public.chat_messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- SEQUENCE chat_public chat_queued_messages_id_seq
CREATE SEQUENCE chat_public.chat_queued_messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- SEQUENCE chat_public chat_queued_messages_position
CREATE SEQUENCE chat_public.chat_queued_messages_position
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- TABLE chat_private chat_leases
CREATE TABLE chat_private.chat_leases (
    chat_id uuid NOT NULL,
    runner_id uuid NOT NULL,
    worker_id text NOT NULL,
    acquired_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

-- TABLE chat_private deleted_requests
CREATE TABLE chat_private.deleted_requests (
    id uuid NOT NULL,
    owner_id uuid NOT NULL,
    deleted_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE chat_private experiments
CREATE TABLE chat_private.experiments (
    name text NOT NULL,
    enabled boolean DEFAULT false NOT NULL,
    description text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- TABLE chat_private idempotency_keys
CREATE TABLE chat_private.idempotency_keys (
    owner_id uuid NOT NULL,
    key text NOT NULL,
    operation text NOT NULL,
    result jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    request_sha256 text,
    CONSTRAINT idempotency_keys_key_check CHECK (((length(key) >= 1) AND (length(key) <= 200))),
    CONSTRAINT idempotency_keys_request_sha256_check CHECK ((request_sha256 ~ '^[0-9a-f]{64}$'::text))
);

-- TABLE chat_private mcp_server_secrets
CREATE TABLE chat_private.mcp_server_secrets (
    server_id text NOT NULL,
    env jsonb DEFAULT '{}'::jsonb NOT NULL,
    headers jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT mcp_server_secrets_env_check CHECK ((jsonb_typeof(env) = 'object'::text)),
    CONSTRAINT mcp_server_secrets_headers_check CHECK ((jsonb_typeof(headers) = 'object'::text))
);

-- TABLE chat_private mcp_servers
CREATE TABLE chat_private.mcp_servers (
    id text NOT NULL,
    transport text NOT NULL,
    command text,
    args jsonb DEFAULT '[]'::jsonb NOT NULL,
    url text,
    timeout_ms integer DEFAULT 30000 NOT NULL,
    output_cap_bytes integer DEFAULT 65536 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    description text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT mcp_servers_args_check CHECK ((jsonb_typeof(args) = 'array'::text)),
    CONSTRAINT mcp_servers_check CHECK ((((transport = 'stdio'::text) AND (command IS NOT NULL) AND (url IS NULL)) OR ((transport = 'http'::text) AND (url IS NOT NULL) AND (command IS NULL)))),
    CONSTRAINT mcp_servers_id_check CHECK (((id ~ '^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$'::text) AND (length(id) <= 32))),
    CONSTRAINT mcp_servers_output_cap_bytes_check CHECK (((output_cap_bytes >= 1024) AND (output_cap_bytes <= 1048576))),
    CONSTRAINT mcp_servers_timeout_ms_check CHECK (((timeout_ms >= 100) AND (timeout_ms <= 600000))),
    CONSTRAINT mcp_servers_transport_check CHECK ((transport = ANY (ARRAY['stdio'::text, 'http'::text]))),
    CONSTRAINT mcp_servers_url_check CHECK ((url ~ '^https?://'::text))
);

-- TABLE chat_private message_internals
CREATE TABLE chat_private.message_internals (
    message_id bigint NOT NULL,
    provider_metadata jsonb,
    finish jsonb,
    finalizer_screening jsonb
);

-- TABLE chat_private model_config_secrets
CREATE TABLE chat_private.model_config_secrets (
    model_config_id text NOT NULL,
    api_key text NOT NULL
);

-- TABLE chat_private model_configs
CREATE TABLE chat_private.model_configs (
    id text NOT NULL,
    provider text NOT NULL,
    model text NOT NULL,
    base_url text,
    context_limit integer DEFAULT 128000 NOT NULL,
    compaction_threshold_percent integer DEFAULT 70 NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT model_configs_compaction_threshold_percent_check CHECK (((compaction_threshold_percent >= 1) AND (compaction_threshold_percent <= 100))),
    CONSTRAINT model_configs_context_limit_check CHECK ((context_limit > 0)),
    CONSTRAINT model_configs_id_check CHECK ((id ~ '^[A-Za-z0-9_.:-]{1,64}$'::text)),
    CONSTRAINT model_configs_model_check CHECK (((length(model) >= 1) AND (length(model) <= 200))),
    CONSTRAINT model_configs_options_check CHECK ((jsonb_typeof(options) = 'object'::text)),
    CONSTRAINT model_configs_provider_check CHECK ((provider = ANY (ARRAY['openai-responses'::text, 'openai-chat'::text, 'openai-compatible'::text, 'anthropic'::text, 'scripted'::text])))
);

-- TABLE chat_private openai_response_rounds
CREATE TABLE chat_private.openai_response_rounds (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    request_id uuid NOT NULL,
    owner_id uuid NOT NULL,
    round integer NOT NULL,
    previous_id uuid NOT NULL,
    answered_calls jsonb NOT NULL,
    background boolean NOT NULL,
    echo jsonb NOT NULL,
    body_sha256 text NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT openai_response_rounds_answered_calls_check CHECK ((jsonb_typeof(answered_calls) = 'array'::text)),
    CONSTRAINT openai_response_rounds_body_sha256_check CHECK ((body_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT openai_response_rounds_echo_check CHECK ((jsonb_typeof(echo) = 'object'::text)),
    CONSTRAINT openai_response_rounds_idempotency_key_check CHECK ((octet_length(idempotency_key) <= 200)),
    CONSTRAINT openai_response_rounds_round_check CHECK ((round > 0))
);

-- TABLE chat_private openai_responses
CREATE TABLE chat_private.openai_responses (
    request_id uuid NOT NULL,
    chat_id uuid NOT NULL,
    owner_id uuid NOT NULL,
    background boolean NOT NULL,
    echo jsonb NOT NULL,
    body_sha256 text NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT openai_responses_body_sha256_check CHECK ((body_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT openai_responses_echo_check CHECK ((jsonb_typeof(echo) = 'object'::text)),
    CONSTRAINT openai_responses_idempotency_key_check CHECK ((octet_length(idempotency_key) <= 200))
);

-- TABLE chat_private server_epoch
CREATE TABLE chat_private.server_epoch (
    one boolean DEFAULT true NOT NULL,
    epoch text NOT NULL,
    observed_at timestamp with time zone NOT NULL,
    last_seen_before timestamp with time zone,
    CONSTRAINT server_epoch_one_check CHECK (one)
);

-- TABLE chat_private settings
CREATE TABLE chat_private.settings (
    name text NOT NULL,
    value jsonb NOT NULL,
    description text NOT NULL
);

-- TABLE chat_private stop_hook_secrets
CREATE TABLE chat_private.stop_hook_secrets (
    hook_id uuid NOT NULL,
    secret text NOT NULL,
    CONSTRAINT stop_hook_secrets_secret_check CHECK ((length(secret) >= 16))
);

-- TABLE chat_private stop_hooks
CREATE TABLE chat_private.stop_hooks (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    url text NOT NULL,
    timeout_ms integer DEFAULT 10000 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT stop_hooks_name_check CHECK ((name ~ '^[A-Za-z0-9_.-]{1,64}$'::text)),
    CONSTRAINT stop_hooks_timeout_ms_check CHECK (((timeout_ms >= 100) AND (timeout_ms <= 120000))),
    CONSTRAINT stop_hooks_url_check CHECK (((url ~ '^https?://'::text) AND (length(url) <= 2048)))
);

-- TABLE chat_private transition_rules
CREATE TABLE chat_private.transition_rules (
    transition text NOT NULL,
    from_state text NOT NULL,
    note text NOT NULL,
    to_state text[] NOT NULL,
    allowed boolean GENERATED ALWAYS AS ((cardinality(to_state) > 0)) STORED NOT NULL,
    CONSTRAINT transition_rules_from_state_check CHECK ((from_state = ANY (ARRAY['waiting'::text, 'running'::text, 'interrupting'::text, 'requires_action'::text, 'error'::text, 'archived'::text]))),
    CONSTRAINT transition_rules_to_state CHECK ((to_state <@ ARRAY['waiting'::text, 'running'::text, 'interrupting'::text, 'requires_action'::text, 'error'::text, 'archived'::text]))
);

-- TABLE chat_private turn_progress
CREATE TABLE chat_private.turn_progress (
    id bigint NOT NULL,
    chat_id uuid NOT NULL,
    input_message_id bigint,
    structured_output_request_id uuid,
    steps integer DEFAULT 0 NOT NULL,
    hook_continuations integer DEFAULT 0 NOT NULL,
    recoveries integer DEFAULT 0 NOT NULL,
    rejected_batches integer DEFAULT 0 NOT NULL,
    value_rejected boolean DEFAULT false NOT NULL,
    candidate_present boolean DEFAULT false NOT NULL,
    candidate_value jsonb,
    candidate_step integer,
    candidate_message_id bigint,
    invalidations integer DEFAULT 0 NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT turn_progress_check CHECK ((candidate_present OR (candidate_value IS NULL)))
);

-- TABLE chat_private webhook_attempts
CREATE TABLE chat_private.webhook_attempts (
    delivery_id bigint NOT NULL,
    attempt integer NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    status_code integer,
    error text,
    CONSTRAINT webhook_attempts_error_check CHECK ((octet_length(error) <= 500))
);

-- TABLE chat_private webhook_deliveries
CREATE TABLE chat_private.webhook_deliveries (
    id bigint NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id text NOT NULL,
    event_type text NOT NULL,
    subject_id text NOT NULL,
    body text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone,
    delivered_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_deliveries_check CHECK (((status = 'pending'::text) = (next_attempt_at IS NOT NULL))),
    CONSTRAINT webhook_deliveries_event_id_check CHECK ((event_id ~ '^evt_[0-9a-f]{32}$'::text)),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text])))
);

-- TABLE chat_private webhook_endpoints
CREATE TABLE chat_private.webhook_endpoints (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamp with time zone,
    enabled boolean DEFAULT true NOT NULL,
    disabled_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_endpoints_check CHECK (((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))),
    CONSTRAINT webhook_endpoints_events_check CHECK (((cardinality(events) > 0) AND (events <@ ARRAY['response.completed'::text, 'response.failed'::text, 'response.cancelled'::text, 'response.incomplete'::text, 'batch.completed'::text, 'batch.failed'::text, 'batch.cancelled'::text]))),
    CONSTRAINT webhook_endpoints_previous_secret_check CHECK ((previous_secret ~ '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$'::text)),
    CONSTRAINT webhook_endpoints_secret_check CHECK ((secret ~ '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$'::text)),
    CONSTRAINT webhook_endpoints_url_check CHECK (((url ~ '^https?://'::text) AND (octet_length(url) <= 2048)))
);

-- TABLE chat_private worker_config_version
CREATE TABLE chat_private.worker_config_version (
    id boolean DEFAULT true NOT NULL,
    version bigint DEFAULT 1 NOT NULL,
    CONSTRAINT worker_config_version_id_check CHECK (id)
);

-- TABLE chat_private worker_processes
CREATE TABLE chat_private.worker_processes (
    queue_id text NOT NULL,
    worker_id text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    seen_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

-- TABLE chat_public batch_items
CREATE TABLE chat_public.batch_items (
    batch_id uuid NOT NULL,
    line integer NOT NULL,
    content jsonb,
    status chat_public.batch_item_status DEFAULT 'pending'::chat_public.batch_item_status NOT NULL,
    chat_id uuid,
    structured_output_request_id uuid,
    error_code text,
    error_message text,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    slot smallint,
    CONSTRAINT batch_items_check CHECK (((status <> 'pending'::chat_public.batch_item_status) OR (content IS NOT NULL))),
    CONSTRAINT batch_items_check1 CHECK (((status = ANY (ARRAY['pending'::chat_public.batch_item_status, 'running'::chat_public.batch_item_status])) = (finished_at IS NULL))),
    CONSTRAINT batch_items_error_code_check CHECK ((length(error_code) <= 64)),
    CONSTRAINT batch_items_error_message_check CHECK ((length(error_message) <= 2000)),
    CONSTRAINT batch_items_line_check CHECK ((line >= 1)),
    CONSTRAINT batch_items_running_slot CHECK (((status <> 'running'::chat_public.batch_item_status) OR (slot IS NOT NULL))),
    CONSTRAINT batch_items_slot_check CHECK (((slot >= 1) AND (slot <= 64)))
);

-- TABLE chat_public batches
CREATE TABLE chat_public.batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    name text,
    response_format jsonb NOT NULL,
    schema_sha256 text NOT NULL,
    model_config_id text NOT NULL,
    workspace text,
    concurrency integer DEFAULT 4 NOT NULL,
    status chat_public.batch_status DEFAULT 'validating'::chat_public.batch_status NOT NULL,
    error text,
    total_items integer NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT batches_check CHECK (((status = ANY (ARRAY['completed'::chat_public.batch_status, 'failed'::chat_public.batch_status])) <= (finished_at IS NOT NULL))),
    CONSTRAINT batches_concurrency_check CHECK (((concurrency >= 1) AND (concurrency <= 64))),
    CONSTRAINT batches_error_check CHECK ((length(error) <= 2000)),
    CONSTRAINT batches_idempotency_key_check CHECK (((length(idempotency_key) >= 1) AND (length(idempotency_key) <= 200))),
    CONSTRAINT batches_name_check CHECK ((length(name) <= 200)),
    CONSTRAINT batches_response_format_check CHECK ((jsonb_typeof(response_format) = 'object'::text)),
    CONSTRAINT batches_schema_sha256_check CHECK ((schema_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT batches_total_items_check CHECK (((total_items >= 1) AND (total_items <= 100000))),
    CONSTRAINT batches_workspace_check CHECK ((workspace ~ '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$'::text))
);

-- TABLE chat_public chat_messages
CREATE TABLE chat_public.chat_messages (
    id bigint NOT NULL,
    chat_id uuid NOT NULL,
    role chat_public.message_role NOT NULL,
    visibility chat_public.message_visibility DEFAULT 'both'::chat_public.message_visibility NOT NULL,
    kind chat_public.message_kind DEFAULT 'message'::chat_public.message_kind NOT NULL,
    content jsonb NOT NULL,
    compressed boolean DEFAULT false NOT NULL,
    deleted boolean DEFAULT false NOT NULL,
    revision bigint,
    created_by uuid,
    usage jsonb,
    structured_output_request_id uuid,
    structured_output jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_messages_content_check CHECK ((jsonb_typeof(content) = 'array'::text)),
    CONSTRAINT chat_messages_receipt_shape CHECK ((((kind = 'receipt'::chat_public.message_kind) = (structured_output IS NOT NULL)) AND ((kind <> 'receipt'::chat_public.message_kind) OR ((role = 'assistant'::chat_public.message_role) AND (visibility = 'user'::chat_public.message_visibility) AND (structured_output_request_id IS NOT NULL)))))
);

-- TABLE chat_public chat_queued_messages
CREATE TABLE chat_public.chat_queued_messages (
    id bigint NOT NULL,
    chat_id uuid NOT NULL,
    content jsonb NOT NULL,
    "position" bigint DEFAULT nextval('chat_public.chat_queued_messages_position'::regclass) NOT NULL,
    structured_output_request_id uuid,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chat_queued_messages_content_check CHECK ((jsonb_typeof(content) = 'array'::text))
);

-- TABLE chat_public chats
CREATE TABLE chat_public.chats (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    title text,
    model_config_id text NOT NULL,
    status chat_public.chat_status DEFAULT 'waiting'::chat_public.chat_status NOT NULL,
    archived boolean DEFAULT false NOT NULL,
    plan_mode boolean DEFAULT false NOT NULL,
    parent_chat_id uuid,
    dynamic_tools jsonb DEFAULT '[]'::jsonb NOT NULL,
    workspace text,
    pending_tool_calls jsonb DEFAULT '[]'::jsonb NOT NULL,
    requires_action_deadline_at timestamp with time zone,
    retry_state jsonb,
    last_error jsonb,
    snapshot_version bigint DEFAULT 1 NOT NULL,
    history_version bigint DEFAULT 1 NOT NULL,
    queue_version bigint DEFAULT 0 NOT NULL,
    generation_attempt bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    compaction_requested_at timestamp with time zone,
    mcp_server_ids text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT chats_check CHECK (((NOT archived) OR (status = ANY (ARRAY['waiting'::chat_public.chat_status, 'error'::chat_public.chat_status])))),
    CONSTRAINT chats_check1 CHECK (((status = 'requires_action'::chat_public.chat_status) = (requires_action_deadline_at IS NOT NULL))),
    CONSTRAINT chats_dynamic_tools_check CHECK ((jsonb_typeof(dynamic_tools) = 'array'::text)),
    CONSTRAINT chats_mcp_server_ids_check CHECK ((cardinality(mcp_server_ids) <= 16)),
    CONSTRAINT chats_pending_tool_calls_check CHECK ((jsonb_typeof(pending_tool_calls) = 'array'::text)),
    CONSTRAINT chats_title_check CHECK ((length(title) <= 200)),
    CONSTRAINT chats_workspace_check CHECK ((length(workspace) <= 1024))
);

-- TABLE chat_public structured_output_requests
CREATE TABLE chat_public.structured_output_requests (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    chat_id uuid NOT NULL,
    name text NOT NULL,
    description text,
    schema jsonb NOT NULL,
    schema_sha256 text NOT NULL,
    status chat_public.structured_output_status DEFAULT 'pending'::chat_public.structured_output_status NOT NULL,
    error_code text,
    error_message text,
    receipt_message_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    finalization_attempts integer,
    model_steps integer,
    model_config_id text,
    provider text,
    model text,
    input_tokens bigint,
    output_tokens bigint,
    started_at timestamp with time zone,
    CONSTRAINT structured_output_requests_check CHECK (((status = 'pending'::chat_public.structured_output_status) = (receipt_message_id IS NULL))),
    CONSTRAINT structured_output_requests_check1 CHECK (((status = 'pending'::chat_public.structured_output_status) = (finished_at IS NULL))),
    CONSTRAINT structured_output_requests_check2 CHECK (
CASE status
    WHEN 'pending'::chat_public.structured_output_status THEN (error_code IS NULL)
    WHEN 'succeeded'::chat_public.structured_output_status THEN (error_code IS NULL)
    WHEN 'failed'::chat_public.structured_output_status THEN (error_code = ANY (ARRAY['not_produced'::text, 'validation_exhausted'::text, 'refused'::text, 'generation_failed'::text, 'configuration_error'::text]))
    WHEN 'canceled'::chat_public.structured_output_status THEN (error_code = ANY (ARRAY['interrupted'::text, 'superseded'::text, 'queue_deleted'::text, 'operator_canceled'::text]))
    ELSE NULL::boolean
END),
    CONSTRAINT structured_output_requests_description_check CHECK ((octet_length(description) <= 1024)),
    CONSTRAINT structured_output_requests_error_message_check CHECK ((length(error_message) <= 2000)),
    CONSTRAINT structured_output_requests_finalization_attempts_check CHECK ((finalization_attempts >= 0)),
    CONSTRAINT structured_output_requests_input_tokens_check CHECK ((input_tokens >= 0)),
    CONSTRAINT structured_output_requests_model_steps_check CHECK ((model_steps >= 0)),
    CONSTRAINT structured_output_requests_name_check CHECK ((name ~ '^[A-Za-z0-9_-]{1,64}$'::text)),
    CONSTRAINT structured_output_requests_output_tokens_check CHECK ((output_tokens >= 0)),
    CONSTRAINT structured_output_requests_schema_check CHECK ((jsonb_typeof(schema) = 'object'::text)),
    CONSTRAINT structured_output_requests_schema_sha256_check CHECK ((schema_sha256 ~ '^[0-9a-f]{64}$'::text))
);

-- TABLE chat_public users
CREATE TABLE chat_public.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT users_name_check CHECK ((name ~ '^[A-Za-z0-9_.@-]{1,64}$'::text))
);

-- TRIGGER chat_private model_config_secrets _900_worker_config_version
CREATE TRIGGER _900_worker_config_version AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON chat_private.model_config_secrets FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_worker_config__bump();

-- TRIGGER chat_private model_configs _900_worker_config_version
CREATE TRIGGER _900_worker_config_version AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON chat_private.model_configs FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_worker_config__bump();

-- TRIGGER chat_private settings _900_worker_config_version
CREATE TRIGGER _900_worker_config_version AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON chat_private.settings FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_worker_config__bump();

-- TRIGGER chat_private stop_hook_secrets _900_worker_config_version
CREATE TRIGGER _900_worker_config_version AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON chat_private.stop_hook_secrets FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_worker_config__bump();

-- TRIGGER chat_private stop_hooks _900_worker_config_version
CREATE TRIGGER _900_worker_config_version AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON chat_private.stop_hooks FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_worker_config__bump();

-- TRIGGER chat_private turn_progress _900_enqueue_run
CREATE TRIGGER _900_enqueue_run AFTER INSERT ON chat_private.turn_progress FOR EACH ROW EXECUTE FUNCTION chat_private.tg_turn_progress__enqueue_run();

-- TRIGGER chat_private webhook_endpoints _500_fail_pending_deliveries
CREATE TRIGGER _500_fail_pending_deliveries AFTER UPDATE OF enabled ON chat_private.webhook_endpoints FOR EACH ROW WHEN ((old.enabled AND (NOT new.enabled))) EXECUTE FUNCTION chat_private.tg_webhook_endpoints__fail_pending_deliveries();

-- TRIGGER chat_public batches _950_webhook
CREATE TRIGGER _950_webhook AFTER UPDATE OF status ON chat_public.batches FOR EACH ROW WHEN (((old.status = ANY (ARRAY['validating'::chat_public.batch_status, 'running'::chat_public.batch_status])) AND (new.status = ANY (ARRAY['completed'::chat_public.batch_status, 'failed'::chat_public.batch_status, 'canceled'::chat_public.batch_status])))) EXECUTE FUNCTION chat_private.tg_batches__webhook();

-- TRIGGER chat_public chat_messages _100_stamp_revision_and_fence_history
CREATE TRIGGER _100_stamp_revision_and_fence_history BEFORE INSERT OR UPDATE ON chat_public.chat_messages FOR EACH ROW EXECUTE FUNCTION chat_private.tg_chat_messages__stamp_revision_and_fence_history();

-- TRIGGER chat_public chat_messages _200_guard_receipts_insert
CREATE TRIGGER _200_guard_receipts_insert BEFORE INSERT ON chat_public.chat_messages FOR EACH ROW WHEN ((new.kind = 'receipt'::chat_public.message_kind)) EXECUTE FUNCTION chat_private.tg_chat_messages__guard_receipts();

-- TRIGGER chat_public chat_messages _200_guard_receipts_update
CREATE TRIGGER _200_guard_receipts_update BEFORE UPDATE ON chat_public.chat_messages FOR EACH ROW WHEN (((old.kind = 'receipt'::chat_public.message_kind) OR (new.kind = 'receipt'::chat_public.message_kind))) EXECUTE FUNCTION chat_private.tg_chat_messages__guard_receipts();

-- TRIGGER chat_public chat_messages _500_fence_history_delete
CREATE TRIGGER _500_fence_history_delete AFTER DELETE ON chat_public.chat_messages REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_chat_messages__fence_delete();

-- TRIGGER chat_public chat_messages _500_fence_history_update
CREATE TRIGGER _500_fence_history_update AFTER UPDATE ON chat_public.chat_messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_chat_messages__fence_update();

-- TRIGGER chat_public chat_queued_messages _500_bump_queue_version_delete
CREATE TRIGGER _500_bump_queue_version_delete AFTER DELETE ON chat_public.chat_queued_messages REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_chat_queued_messages__bump_queue_version();

-- TRIGGER chat_public chat_queued_messages _500_bump_queue_version_insert
CREATE TRIGGER _500_bump_queue_version_insert AFTER INSERT ON chat_public.chat_queued_messages REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_chat_queued_messages__bump_queue_version();

-- TRIGGER chat_public chat_queued_messages _500_bump_queue_version_update
CREATE TRIGGER _500_bump_queue_version_update AFTER UPDATE ON chat_public.chat_queued_messages REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION chat_private.tg_chat_queued_messages__bump_queue_version();

-- TRIGGER chat_public chats _100_touch
CREATE TRIGGER _100_touch BEFORE UPDATE ON chat_public.chats FOR EACH ROW EXECUTE FUNCTION chat_private.tg_chats__touch();

-- TRIGGER chat_public chats _900_enqueue_run
CREATE TRIGGER _900_enqueue_run AFTER UPDATE OF status ON chat_public.chats FOR EACH ROW WHEN (((new.status = ANY (ARRAY['running'::chat_public.chat_status, 'interrupting'::chat_public.chat_status])) AND (old.status IS DISTINCT FROM new.status))) EXECUTE FUNCTION chat_private.tg_chats__enqueue_run();

-- TRIGGER chat_public chats _950_webhook_function_calls
CREATE TRIGGER _950_webhook_function_calls AFTER UPDATE OF status ON chat_public.chats FOR EACH ROW WHEN (((new.status = 'requires_action'::chat_public.chat_status) AND (old.status IS DISTINCT FROM new.status))) EXECUTE FUNCTION chat_private.tg_chats__webhook_function_calls();

-- TRIGGER chat_public structured_output_requests _900_finish_batch_item
CREATE TRIGGER _900_finish_batch_item AFTER UPDATE OF status ON chat_public.structured_output_requests FOR EACH ROW WHEN (((old.status = 'pending'::chat_public.structured_output_status) AND (new.status <> 'pending'::chat_public.structured_output_status))) EXECUTE FUNCTION chat_private.tg_structured_output_requests__finish_batch_item();

-- TRIGGER chat_public structured_output_requests _950_webhook
CREATE TRIGGER _950_webhook AFTER UPDATE OF status ON chat_public.structured_output_requests FOR EACH ROW WHEN (((old.status = 'pending'::chat_public.structured_output_status) AND (new.status <> 'pending'::chat_public.structured_output_status))) EXECUTE FUNCTION chat_private.tg_structured_output_requests__webhook();

-- TYPE chat_private fence
CREATE TYPE chat_private.fence AS (
	runner_id uuid,
	history_version bigint,
	generation_attempt bigint
);

-- TYPE chat_public batch_item_counts
CREATE TYPE chat_public.batch_item_counts AS (
	pending integer,
	running integer,
	succeeded integer,
	failed integer,
	canceled integer
);

-- TYPE chat_public batch_item_status
CREATE TYPE chat_public.batch_item_status AS ENUM (
    'pending',
    'running',
    'succeeded',
    'failed',
    'canceled'
);

-- TYPE chat_public batch_status
CREATE TYPE chat_public.batch_status AS ENUM (
    'validating',
    'running',
    'completed',
    'failed',
    'canceled'
);

-- TYPE chat_public busy_behavior
CREATE TYPE chat_public.busy_behavior AS ENUM (
    'queue',
    'interrupt'
);

-- TYPE chat_public chat_input_result
CREATE TYPE chat_public.chat_input_result AS (
	chat_id uuid,
	message_id bigint,
	queued_message_id bigint,
	structured_output_request_id uuid,
	receipt_message_ids bigint[]
);

-- TYPE chat_public chat_status
CREATE TYPE chat_public.chat_status AS ENUM (
    'waiting',
    'running',
    'interrupting',
    'requires_action',
    'error'
);

-- TYPE chat_public message_kind
CREATE TYPE chat_public.message_kind AS ENUM (
    'message',
    'receipt',
    'control',
    'summary'
);

-- TYPE chat_public message_role
CREATE TYPE chat_public.message_role AS ENUM (
    'system',
    'user',
    'assistant',
    'tool'
);

-- TYPE chat_public message_visibility
CREATE TYPE chat_public.message_visibility AS ENUM (
    'user',
    'model',
    'both'
);

-- TYPE chat_public structured_output
CREATE TYPE chat_public.structured_output AS (
	request_id uuid,
	status chat_public.structured_output_status,
	value jsonb,
	value_json text,
	error chat_public.structured_output_error,
	provenance chat_public.structured_output_provenance
);

-- TYPE chat_public structured_output_error
CREATE TYPE chat_public.structured_output_error AS (
	code text,
	message text
);

-- TYPE chat_public structured_output_provenance
CREATE TYPE chat_public.structured_output_provenance AS (
	finalization_attempts integer,
	model_steps integer,
	model_config_id text,
	provider text,
	model text,
	input_tokens bigint,
	output_tokens bigint,
	started_at timestamp with time zone,
	finished_at timestamp with time zone,
	schema_sha256 text
);

-- TYPE chat_public structured_output_status
CREATE TYPE chat_public.structured_output_status AS ENUM (
    'pending',
    'succeeded',
    'failed',
    'canceled'
);

-- TYPE chat_public webhook_endpoint
CREATE TYPE chat_public.webhook_endpoint AS (
	id uuid,
	url text,
	events text[],
	enabled boolean,
	disabled_reason text,
	rotating boolean,
	created_at timestamp with time zone,
	pending bigint,
	delivered bigint,
	failed bigint
);

-- TYPE chat_public webhook_endpoint_secret
CREATE TYPE chat_public.webhook_endpoint_secret AS (
	endpoint_id uuid,
	secret text
);

-- VIEW chat_private batch_progress
CREATE VIEW chat_private.batch_progress WITH (security_invoker='true') AS
 SELECT b.id AS batch_id,
    b.owner_id,
    b.name,
    b.status,
    b.concurrency,
    b.total_items,
    c.pending,
    c.running,
    c.succeeded,
    c.failed,
    c.canceled,
    c.finished_items,
    b.created_at,
    b.started_at,
    b.finished_at,
    round(((c.ran)::numeric / NULLIF(EXTRACT(epoch FROM (COALESCE(b.finished_at, now()) - b.started_at)), (0)::numeric)), 2) AS items_per_second,
        CASE
            WHEN ((c.ran > 0) AND (b.finished_at IS NULL) AND (b.status = 'running'::chat_public.batch_status)) THEN make_interval(secs => (((((c.pending + c.running))::numeric * EXTRACT(epoch FROM (now() - b.started_at))) / (c.ran)::numeric))::double precision)
            ELSE NULL::interval
        END AS eta,
    b.error
   FROM (chat_public.batches b
     CROSS JOIN LATERAL ( SELECT count(*) FILTER (WHERE (i.status = 'pending'::chat_public.batch_item_status)) AS pending,
            count(*) FILTER (WHERE (i.status = 'running'::chat_public.batch_item_status)) AS running,
            count(*) FILTER (WHERE (i.status = 'succeeded'::chat_public.batch_item_status)) AS succeeded,
            count(*) FILTER (WHERE (i.status = 'failed'::chat_public.batch_item_status)) AS failed,
            count(*) FILTER (WHERE (i.status = 'canceled'::chat_public.batch_item_status)) AS canceled,
            count(*) FILTER (WHERE (i.status <> ALL (ARRAY['pending'::chat_public.batch_item_status, 'running'::chat_public.batch_item_status]))) AS finished_items,
            count(*) FILTER (WHERE ((i.status <> ALL (ARRAY['pending'::chat_public.batch_item_status, 'running'::chat_public.batch_item_status])) AND (i.started_at IS NOT NULL))) AS ran
           FROM chat_public.batch_items i
          WHERE (i.batch_id = b.id)) c);

-- VIEW chat_private job_queue
CREATE VIEW chat_private.job_queue AS
 SELECT j.task_identifier,
    count(*) FILTER (WHERE ((j.locked_at IS NULL) AND (j.attempts < j.max_attempts) AND (j.run_at <= now()))) AS waiting,
    count(*) FILTER (WHERE ((j.locked_at IS NULL) AND (j.attempts < j.max_attempts) AND (j.run_at > now()))) AS scheduled,
    count(*) FILTER (WHERE ((j.locked_at IS NOT NULL) AND (NOT dead.is_dead))) AS running,
    count(*) FILTER (WHERE ((j.locked_at IS NOT NULL) AND dead.is_dead)) AS locked_by_dead_worker,
    count(*) FILTER (WHERE ((j.locked_at IS NULL) AND (j.attempts >= j.max_attempts))) AS failed_permanently,
    min(j.run_at) FILTER (WHERE ((j.locked_at IS NULL) AND (j.attempts < j.max_attempts) AND (j.run_at <= now()))) AS oldest_waiting_since
   FROM (graphile_worker.jobs j
     CROSS JOIN LATERAL ( SELECT (EXISTS ( SELECT 1
                   FROM chat_private.worker_processes w
                  WHERE ((w.queue_id = j.locked_by) AND (NOT chat_private.worker_row_is_live(w.expires_at))))) AS is_dead) dead)
  GROUP BY j.task_identifier;

-- VIEW chat_private lease_holders
CREATE VIEW chat_private.lease_holders WITH (security_invoker='true') AS
 SELECT l.chat_id,
    l.runner_id,
    l.worker_id,
    l.acquired_at,
    l.expires_at,
    chat_private.lease_row_is_live(l.expires_at) AS live,
    c.status,
    c.generation_attempt
   FROM (chat_private.chat_leases l
     JOIN chat_public.chats c ON ((c.id = l.chat_id)));

-- VIEW chat_private queue_depth
CREATE VIEW chat_private.queue_depth WITH (security_invoker='true') AS
 SELECT q.chat_id,
    c.status,
    count(*) AS queued,
    count(q.structured_output_request_id) AS queued_structured,
    min(q.created_at) AS oldest
   FROM (chat_public.chat_queued_messages q
     JOIN chat_public.chats c ON ((c.id = q.chat_id)))
  GROUP BY q.chat_id, c.status;

-- VIEW chat_private recent_failures
CREATE VIEW chat_private.recent_failures WITH (security_invoker='true') AS
 SELECT r.finished_at AS at,
    'request'::text AS kind,
    r.chat_id,
    r.id AS request_id,
    r.error_code AS code,
    r.error_message AS message
   FROM chat_public.structured_output_requests r
  WHERE (r.status = 'failed'::chat_public.structured_output_status)
UNION ALL
 SELECT c.updated_at AS at,
    'chat'::text AS kind,
    c.id AS chat_id,
    NULL::uuid AS request_id,
    (c.last_error ->> 'kind'::text) AS code,
    (c.last_error ->> 'message'::text) AS message
   FROM chat_public.chats c
  WHERE (c.status = 'error'::chat_public.chat_status);

-- VIEW chat_private request_outcomes_hourly
CREATE VIEW chat_private.request_outcomes_hourly WITH (security_invoker='true') AS
 SELECT date_trunc('hour'::text, COALESCE(structured_output_requests.finished_at, structured_output_requests.created_at)) AS hour,
    structured_output_requests.status,
    structured_output_requests.error_code,
    count(*) AS requests,
    structured_output_requests.model_config_id,
    structured_output_requests.provider,
    structured_output_requests.model,
    sum(structured_output_requests.finalization_attempts) AS finalization_attempts,
    sum(structured_output_requests.model_steps) AS model_steps,
    sum(structured_output_requests.input_tokens) AS input_tokens,
    sum(structured_output_requests.output_tokens) AS output_tokens,
    avg((structured_output_requests.finished_at - structured_output_requests.started_at)) AS avg_duration
   FROM chat_public.structured_output_requests
  GROUP BY (date_trunc('hour'::text, COALESCE(structured_output_requests.finished_at, structured_output_requests.created_at))), structured_output_requests.status, structured_output_requests.error_code, structured_output_requests.model_config_id, structured_output_requests.provider, structured_output_requests.model;

-- VIEW chat_private stuck_chats
CREATE VIEW chat_private.stuck_chats WITH (security_invoker='true') AS
 SELECT c.id AS chat_id,
    c.owner_id,
    c.status,
    c.updated_at,
    l.runner_id,
    l.worker_id,
    l.expires_at AS lease_expired_at,
    (now() - COALESCE(l.expires_at, c.updated_at)) AS stuck_for,
    t.recoveries
   FROM ((chat_public.chats c
     LEFT JOIN chat_private.chat_leases l ON ((l.chat_id = c.id)))
     LEFT JOIN chat_private.turn_progress t ON (((t.chat_id = c.id) AND (t.finished_at IS NULL))))
  WHERE ((c.status = ANY (ARRAY['running'::chat_public.chat_status, 'interrupting'::chat_public.chat_status])) AND ((l.chat_id IS NULL) OR (NOT chat_private.lease_row_is_live(l.expires_at))));

-- VIEW chat_private turns_at_recovery_bound
CREATE VIEW chat_private.turns_at_recovery_bound WITH (security_invoker='true') AS
 SELECT t.chat_id,
    t.id AS turn_id,
    t.structured_output_request_id,
    t.recoveries,
    t.steps,
    t.started_at,
    t.finished_at
   FROM chat_private.turn_progress t
  WHERE (t.recoveries >= chat_private.setting_int('max_recoveries_per_turn'::text));
