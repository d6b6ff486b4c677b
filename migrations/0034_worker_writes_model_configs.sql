-- Up Migration
-- The worker works as chat_worker (src/db/run-time-roles.ts) and writes the model configs, and their keys, that it
-- reads from its environment at start-up (src/providers/configure.ts). Nobody else may: chat_operator reads the
-- configs but never the keys.
create policy write_worker on chat_private.model_configs for all to chat_worker using (true) with check (true);
create policy write_worker on chat_private.model_config_secrets for all to chat_worker using (true) with check (true);
grant insert, update, delete on chat_private.model_configs, chat_private.model_config_secrets to chat_worker;
