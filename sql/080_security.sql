-- Privileges and row-level security. Clients (chat_user) only SELECT, through RLS; every write is a security
-- definer transition. chat_operator reads everything except secrets and writes nothing. chat_worker runs the
-- worker transitions. Row-level security, policies and table grants are migrations (0008 onwards); the function
-- grants stay here.

revoke all on all functions in schema chat_public from public;
revoke all on all functions in schema chat_private from public;
grant execute on function chat_public.current_user_id() to chat_anonymous, chat_user, chat_operator, chat_worker;
grant execute on function
  chat_public.create_chat(jsonb, text, text, text, text, jsonb, boolean, text),
  chat_public.send_chat_message(uuid, jsonb, text, text, text),
  chat_public.edit_chat_message(bigint, jsonb, text, text, bigint),
  chat_public.delete_queued_message(bigint),
  chat_public.promote_queued_message(bigint),
  chat_public.interrupt_chat(uuid),
  chat_public.submit_tool_results(uuid, jsonb),
  chat_public.archive_chat(uuid, boolean),
  chat_public.set_chat_plan_mode(uuid, boolean)
to chat_user, chat_anonymous;
-- chat_anonymous may call them too: each one starts with chat_private.require_user(), so an anonymous call is
-- refused with NOAUT (an authentication error clients can act on) instead of a masked permission error.
grant execute on function
  chat_private.acquire_lease(uuid, text, integer),
  chat_private.renew_lease(uuid, uuid, integer),
  chat_private.release_lease(uuid, uuid),
  chat_private.commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb, text[]),
  chat_private.enter_requires_action(uuid, uuid, bigint, bigint, jsonb, integer),
  chat_private.finish_turn(uuid, uuid, bigint, bigint, jsonb),
  chat_private.finish_error(uuid, uuid, bigint, bigint, text, text),
  chat_private.finish_interruption(uuid, uuid, bigint, bigint, jsonb),
  chat_private.cancel_requires_action(uuid),
  chat_private.sweep_expired_leases(),
  chat_private.current_fence(uuid),
  chat_private.response_format_errors(jsonb),
  chat_private.schema_sha256(jsonb)
to chat_worker;
grant execute on function chat_private.response_format_errors(jsonb), chat_private.schema_sha256(jsonb)
  to chat_operator;

comment on table chat_public.users is E'People who own chats. The JWT `sub` claim is a user id.';
comment on table chat_public.chats is
  E'A conversation and its execution state. `status`: waiting, running, interrupting, requires_action (waiting for client tool results), error. The version counters fence workers and drive live streams.';
comment on column chat_public.chats.snapshot_version is E'Bumped once by every transition.';
comment on column chat_public.chats.history_version is E'The snapshot_version of the latest history change (receipts excepted).';
comment on column chat_public.chats.queue_version is E'The snapshot_version of the latest queue change.';
comment on column chat_public.chats.generation_attempt is E'Generation attempts since the last history change.';
comment on column chat_public.chats.pending_tool_calls is E'The client-executed tool calls the chat waits on, as [{tool_call_id, tool_name}].';
comment on table chat_public.chat_messages is
  E'The transcript. `id` is the stream cursor. A receipt (`kind` receipt) carries `structured_output` = {request_id, status, value | error {code, message}}; only receipts carry results.';
comment on column chat_public.chat_messages.content is E'Parts: text, reasoning, tool-call, tool-result, file, source.';
comment on column chat_public.chat_messages.deleted is E'Discarded by an edit. Receipts stay readable.';
comment on column chat_public.chat_messages.revision is E'The chat''s snapshot_version when the row was last written (set by the database).';
comment on column chat_public.chat_messages.structured_output_request_id is E'The structured output request this input started, or that this receipt ends.';
comment on table chat_public.chat_queued_messages is E'Inputs waiting for the running turn to finish, in `position` order.';
comment on table chat_public.structured_output_requests is
  E'One row per accepted structured output request: its schema, status (pending, succeeded, failed, canceled) and the receipt that ended it.';
comment on column chat_public.structured_output_requests.schema_sha256 is E'SHA-256 (hex) of `schema::text`.';
