-- Up Migration
-- `chatd worker` and `chatd serve` check that the database is at their build's schema version before working
-- (src/db/schema-gate.ts) with the worker's connection, as chat_worker, so that a worker needs no owner's login
-- at all. The check reads chatd_meta: the migrations applied, the sql/ checksums and the schema contract. The
-- latter two are created by `chatd migrate` after the migrations of a fresh install (src/db/repeatable.ts,
-- schema-contract.ts), hence the default privileges for what the migrating role creates there later.
grant usage on schema chatd_meta to chat_worker;
grant select on all tables in schema chatd_meta to chat_worker;
alter default privileges in schema chatd_meta grant select on tables to chat_worker;
