-- Up Migration
-- PostgreSQL grants EXECUTE to PUBLIC on every function a role creates unless that role's default privileges say
-- otherwise, and only the global form (no IN SCHEMA) can take a default away: migration 0001's per-schema revoke
-- had no effect. This covers every function the migrating role creates from now on, in this database; sql/
-- grants each function's EXECUTE explicitly as well (sql/005_execute_grants.sql).
alter default privileges revoke execute on functions from public;
