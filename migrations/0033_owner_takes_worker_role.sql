-- Up Migration
-- The worker works as chat_worker (src/db/run-time-roles.ts). When it connects with the owner's login (no
-- CHATD_WORKER_DATABASE_URL), that login must be a member of chat_worker to take the role: a superuser always may,
-- a managed database's owner (CREATEROLE, no superuser) is granted it here, once.
do $$
begin
  if not (select rolsuper from pg_catalog.pg_roles where rolname = current_user)
     and not pg_catalog.pg_has_role(current_user, 'chat_worker', 'MEMBER') then
    execute pg_catalog.format('grant chat_worker to %I', current_user);
  end if;
end
$$;
