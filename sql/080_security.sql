-- Privileges and row-level security. Clients (chat_user) only SELECT, through RLS; every write is a security
-- definer transition. chat_operator reads everything except secrets and writes nothing. chat_worker runs the
-- worker transitions. Row-level security, policies and table grants are migrations (0008 onwards); each function's
-- EXECUTE grant follows its definition (sql/005_execute_grants.sql).

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
