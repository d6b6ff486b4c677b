-- Up Migration
-- An idempotency key remembers a hash of the request it was first used with, so that reusing it with a different
-- request is refused (IDKEY) instead of silently returning the first result. Keys recorded before this migration
-- have none and keep replaying as before. The helpers gain a parameter for it (sql/050_chat_internals.sql): their
-- old signatures are dropped here, as overloads would make every call ambiguous.
alter table chat_private.idempotency_keys add column request_sha256 text check (request_sha256 ~ '^[0-9a-f]{64}$');
drop function if exists chat_private.idempotent_result(uuid, text, text);
drop function if exists chat_private.remember_result(uuid, text, text, jsonb);
