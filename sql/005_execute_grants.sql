-- EXECUTE rights, explicit per function. Every function's definition in sql/ is followed by
--   select chat_private.grant_execute('<schema.name(argument types)>', '{role, ...}');
-- which leaves it executable by its owner and exactly those roles: whatever else holds EXECUTE (PUBLIC, or a role
-- an earlier version granted) loses it, so re-applying a file gives the rights of a fresh install.
-- PostgreSQL grants EXECUTE to PUBLIC on every new function unless the creating role's default privileges say
-- otherwise (migration 0030); this does not depend on that. Client functions are granted to chat_anonymous as well
-- as chat_user: each starts with chat_private.require_user(), so an anonymous call is refused with NOAUT (an
-- authentication error clients can act on) instead of a masked permission error.
-- test/security/function-grants.test.ts lists every function with the roles that may execute it.
create or replace function chat_private.grant_execute(p_function regprocedure, p_roles text[]) returns void as $$
declare
  v_grantee text;
begin
  for v_grantee in
    select distinct case when a.grantee = 0 then 'public' else pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) end
    from pg_catalog.pg_proc p, pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
    where p.oid = p_function and a.grantee <> p.proowner
  loop
    execute pg_catalog.format('revoke all on function %s from %s', p_function, v_grantee);
  end loop;
  if pg_catalog.cardinality(p_roles) > 0 then
    execute pg_catalog.format('grant execute on function %s to %s', p_function,
      (select pg_catalog.string_agg(pg_catalog.quote_ident(r), ', ') from pg_catalog.unnest(p_roles) r));
  end if;
end;
$$ language plpgsql volatile set search_path to pg_catalog, pg_temp;
select chat_private.grant_execute('chat_private.grant_execute(regprocedure, text[])', '{}');
