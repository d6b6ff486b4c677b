-- Up Migration
-- The API serves /health and the database gauges of /metrics with its own login (chatd_api), not the owner's: the
-- gauges come from chat_private.service_gauges() (sql/140), the one chat_private function chatd_api may execute.
-- USAGE on the schema lets it name that function; every other object there still needs a grant it does not have.
grant usage on schema chat_private to chatd_api;
