-- Up Migration
-- Operators read every chatd table but the ones holding secrets (docs/security.md); the server epoch of 0080 is
-- what they look at when a failover did or did not count as a recovery.
create policy select_all_operator on chat_private.server_epoch for select to chat_operator using (true);
grant select on chat_private.server_epoch to chat_operator;
