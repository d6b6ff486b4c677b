-- Up Migration
-- One owner per rule (sql/README.md). The history fence is moved only by chat_private._fence_history, which the
-- history triggers call: lock_worker_chat's argument that moved it ahead of them is gone, leaving the body of
-- begin_worker_transition, so lock_worker_chat goes. The row trigger that stamps revisions also fences inserts:
-- it and its function are renamed for both (a rename keeps the trigger and the function in place; sql/020 then
-- defines the function under its new name). On a fresh database sql/ has not run yet, so the function to drop
-- exists only on an upgraded one.
drop function if exists chat_private.lock_worker_chat(uuid, text, uuid, bigint, bigint, boolean);
alter trigger _100_stamp_revision on chat_public.chat_messages rename to _100_stamp_revision_and_fence_history;
alter function chat_private.tg_chat_messages__stamp_revision() rename to tg_chat_messages__stamp_revision_and_fence_history;
