-- Up Migration
-- As for the chat tables (0008): anonymous requests read the batch tables through row-level security (no policy
-- for chat_anonymous, so no rows) instead of failing with a permission error that GraphQL masks as INTERNAL.
grant select on chat_public.batches, chat_public.batch_items to chat_anonymous;
