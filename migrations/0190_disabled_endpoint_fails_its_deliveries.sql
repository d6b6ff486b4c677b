-- Up Migration
-- An endpoint that is disabled (its receiver answered 410 Gone, or an operator set enabled = false) fails its pending
-- deliveries in the same transaction: nothing would send them (webhook_delivery_for_send reads enabled endpoints
-- only), and the sweep would give each a fresh job every minute for ever. The WHEN clause keeps every other update of
-- an endpoint (secret rotation) from calling the function. Its body is in sql/150_webhooks.sql (and here first, for
-- a fresh database, where sql/ runs after the migrations).
create or replace function chat_private.tg_webhook_endpoints__fail_pending_deliveries() returns trigger as $$
begin
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
revoke all on function chat_private.tg_webhook_endpoints__fail_pending_deliveries() from public;
create trigger _500_fail_pending_deliveries after update of enabled on chat_private.webhook_endpoints
  for each row when (OLD.enabled and not NEW.enabled)
  execute function chat_private.tg_webhook_endpoints__fail_pending_deliveries();
-- Deliveries already stranded by an endpoint disabled before this migration.
update chat_private.webhook_deliveries d set status = 'failed', next_attempt_at = null
from chat_private.webhook_endpoints e
where e.id = d.endpoint_id and not e.enabled and d.status = 'pending';
