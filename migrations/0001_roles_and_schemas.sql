-- Up Migration
-- Roles are cluster-wide, so they are created only when missing (several chatd databases may share a cluster).
-- chatd_api logs in for PostGraphile and has no privileges of its own (noinherit): every request switches to
-- chat_user or chat_anonymous. chat_operator reads, chat_worker runs the worker transitions.
do $$
begin
  if not exists (select from pg_roles where rolname = 'chat_anonymous') then create role chat_anonymous nologin; end if;
  if not exists (select from pg_roles where rolname = 'chat_user') then create role chat_user nologin; end if;
  if not exists (select from pg_roles where rolname = 'chat_operator') then create role chat_operator nologin; end if;
  if not exists (select from pg_roles where rolname = 'chat_worker') then create role chat_worker nologin; end if;
  if not exists (select from pg_roles where rolname = 'chatd_api') then create role chatd_api login noinherit; end if;
end
$$;
grant chat_anonymous, chat_user to chatd_api;

create extension if not exists pgcrypto;

create schema chat_public;
create schema chat_private;
comment on schema chat_public is E'Everything a chatd client may see, exposed through GraphQL under row-level security.';
comment on schema chat_private is E'Internal state (secrets, leases, turn progress, replay data); never exposed to clients.';

revoke all on schema chat_public from public;
revoke all on schema chat_private from public;
alter default privileges in schema chat_public revoke all on functions from public;
alter default privileges in schema chat_private revoke all on functions from public;
