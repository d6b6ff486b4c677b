-- Up Migration
-- Deleting a chat deletes the idempotency keys whose remembered result names it (sql/160 _delete_chats). Matched
-- against the owner's keys without an index, every step of retention compared each key of the owner with each chat
-- of the step: with one key per write kept idempotency_key_days, the 100k-turn soak spent about a second per step
-- of 500 chats there (15,000 keys of one user). With this index each chat is one lookup.
create index idempotency_keys_result_chat on chat_private.idempotency_keys ((result ->> 'chat_id'));
