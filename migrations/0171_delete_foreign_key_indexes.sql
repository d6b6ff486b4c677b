-- Up Migration
-- Foreign keys whose referencing columns had no index (bench/delete.ts lists them): each deleted parent row runs
-- the key's action as a query on the referencing table, which without an index is a scan of the whole table.
-- turn_progress.input_message_id (on delete set null): every deleted message scanned every turn ever run, so
-- deleting a chat cost (its messages) x (all turns). chat_messages.created_by and chat_queued_messages.created_by
-- (on delete set null): deleting a user scanned every message of every user. Only what a user writes (inputs,
-- their edits and compaction requests) carries created_by, not the worker's steps, hence the partial indexes.
-- (batches and chats reference model_configs too, left unindexed: model configs are few and an operator removes
-- one rarely, while every chat and batch row would pay for the index.)
create index turn_progress_input_message on chat_private.turn_progress (input_message_id);
create index chat_messages_created_by on chat_public.chat_messages (created_by) where created_by is not null;
create index chat_queued_messages_created_by on chat_public.chat_queued_messages (created_by) where created_by is not null;
