-- Up Migration
-- A Response whose turn stops for client tools is `completed` with function_call items (sql/155), so it is announced
-- like one with a receipt: `response.completed`, written in the transaction that pauses the turn. The WHEN clause
-- keeps every other status update of a chat from calling the function. Its body is in sql/150_webhooks.sql (and here
-- first, for a fresh database, where sql/ runs after the migrations).
create or replace function chat_private.tg_chats__webhook_function_calls() returns trigger as $$
begin
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
revoke all on function chat_private.tg_chats__webhook_function_calls() from public;
create trigger _950_webhook_function_calls after update of status on chat_public.chats
  for each row when (NEW.status = 'requires_action' and OLD.status is distinct from NEW.status)
  execute function chat_private.tg_chats__webhook_function_calls();
