-- Up Migration
-- Deleting chats and users, and retention (sql/160_data_lifecycle.sql).
--
-- Retention settings: days, 0 = off (the default: nothing ages out until an operator says so). A value changed
-- before this migration runs is kept.
insert into chat_private.settings (name, value, description) values
  ('retention_archived_chat_days', '0',
   'Archived chats not changed for this many days are deleted by the retention job (0: never).'),
  ('retention_idle_chat_days', '0',
   'Chats that are not archived, wait for nothing (waiting or error) and have not changed for this many days are deleted by the retention job (0: never).'),
  ('retention_finished_batch_days', '0',
   'Batches finished (completed, failed or canceled) this many days ago are deleted with their items and chats by the retention job (0: never).'),
  ('retention_batch_size', '50',
   'How many chats (or batches) one retention transaction deletes; each batch commits on its own so that no lock is held long.'),
  ('deleted_request_days', '30',
   'How long the id of a structured request whose chat was deleted keeps answering "deleted" (SODEL) instead of "not found".')
on conflict (name) do nothing;

-- A deleted chat's structured requests: only their ids, whose they were and when they went, so that a client polling
-- one learns it was deleted (SODEL) rather than that it never existed. Kept deleted_request_days, removed with the
-- user. No chat id: nothing of the chat is kept.
create table chat_private.deleted_requests (
  id uuid primary key,
  owner_id uuid not null,
  deleted_at timestamptz not null default now()
);
create index deleted_requests_owner on chat_private.deleted_requests (owner_id);
create index deleted_requests_deleted_at on chat_private.deleted_requests (deleted_at);
alter table chat_private.deleted_requests enable row level security;
create policy select_all_operator on chat_private.deleted_requests for select to chat_operator using (true);
grant select on chat_private.deleted_requests to chat_operator;

-- Deleting a chat removes its rows through the foreign keys; each key checked or cascaded on delete needs an index
-- on the referencing column, or every deleted chat, request or message scans the whole referencing table.
-- turn_progress (chat_id): only the open turn had an index (turn_progress_one_open_turn).
create index turn_progress_chat on chat_private.turn_progress (chat_id);
create index turn_progress_request on chat_private.turn_progress (structured_output_request_id)
  where structured_output_request_id is not null;
-- chat_messages (structured_output_request_id): only receipts had one (chat_messages_one_receipt_per_request); the
-- inputs that carry a request are the other rows that reference one.
create index chat_messages_request on chat_public.chat_messages (structured_output_request_id)
  where structured_output_request_id is not null;
create index batch_items_chat on chat_public.batch_items (chat_id) where chat_id is not null;
-- The retention job's candidates: finished batches by age (chats are scanned: an index on chats.updated_at would
-- make every transition's update of the chat row a non-HOT update).
create index batches_finished on chat_public.batches (finished_at) where finished_at is not null;
