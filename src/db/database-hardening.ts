// Database-level privileges that `chatd migrate` re-asserts on every run. They live on the database itself, not in
// a schema, so neither a migration (run once) nor a repeatable sql/ file (re-run only when it changes) would cover a
// database created from a template or restored from a dump: CREATE DATABASE and pg_restore reset them.
//   - TEMP: every role may create temporary tables by default, and a temporary table is the one object a caller can
//     plant in front of a security definer function's names. Only the owner keeps it.
//   - CREATE on schema public: `public` is on the security definer functions' search_path (after pg_catalog);
//     PostgreSQL 14 and older, and databases upgraded from them, let every role create objects there.
// And chat_worker's rights on Graphile Worker's schema: its migrations (run by `chatd migrate`) create and
// recreate tables and functions, which start with no rights (nor row-level security policies) for anyone but the
// owner.
import type pg from "pg";

/** Revokes what PUBLIC still holds and grants the queue to chat_worker; writes nothing when all is in place already. */
export async function hardenDatabase(client: pg.ClientBase): Promise<void> {
  try {
    await client.query(`do $$
    declare
      v_public_schema boolean := exists (select from pg_catalog.pg_namespace where nspname = 'public');
    begin
      if has_database_privilege('public', current_database(), 'TEMP') then
        execute format('revoke temporary on database %I from public', current_database());
      end if;
      if v_public_schema and has_schema_privilege('public', 'public', 'CREATE') then
        revoke create on schema public from public;
      end if;
      -- A REVOKE by a role without the grant option only warns; the refusal must not go unnoticed.
      if has_database_privilege('public', current_database(), 'TEMP')
         or (v_public_schema and has_schema_privilege('public', 'public', 'CREATE')) then
        raise exception 'PUBLIC keeps TEMP on the database or CREATE on schema public' using errcode = '42501';
      end if;
    end $$`);
  } catch (error) {
    throw new Error("cannot revoke TEMP on chatd's database or CREATE on schema public from PUBLIC: the DATABASE_URL " +
      "user must own both, or an administrator revokes them once (see docs/security.md)", { cause: error });
  }
  // Each grant or revoke runs only where the catalog differs from what it states: a GRANT that changes nothing still
  // writes a new row version of the object's catalog row, which invalidates every session's cached plans for it
  // (on every `chatd migrate`, every `chatd start`). PUBLIC loses EXECUTE on Graphile Worker's functions, which
  // its migrations create with it (they run before chatd's, whose 0030 takes that default away for later ones;
  // a database from before 0030 has them with it too): only chat_worker and the owner may call them.
  // Privileges are read from the ACLs themselves (aclexplode), not as has_*_privilege() sees them: those count
  // what PUBLIC holds, which the same block takes away.
  await client.query(`do $$
  declare
    v_worker oid := 'chat_worker'::regrole;
    v_object record;
  begin
    if not exists (select from pg_catalog.pg_namespace n, pg_catalog.aclexplode(coalesce(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
                   where n.nspname = 'graphile_worker' and a.grantee = v_worker and a.privilege_type = 'USAGE') then
      grant usage on schema graphile_worker to chat_worker;
    end if;
    for v_object in
      select c.oid::regclass as name, c.relkind, c.relname = 'migrations' as read_only,
             coalesce(array_agg(a.privilege_type::text order by a.privilege_type) filter (where a.grantee = v_worker), '{}') as held
      from pg_catalog.pg_class c, pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault((case c.relkind when 'S' then 's' else 'r' end)::"char", c.relowner))) a
      where c.relnamespace = 'graphile_worker'::regnamespace and c.relkind in ('r', 'p', 'v', 'S')
      group by c.oid, c.relkind, c.relname
    loop
      if v_object.relkind = 'S' then
        if not v_object.held @> '{SELECT, UPDATE, USAGE}' then
          execute pg_catalog.format('grant usage, select, update on sequence %s to chat_worker', v_object.name);
        end if;
      elsif v_object.read_only then
        if not v_object.held @> '{SELECT}' then
          execute pg_catalog.format('grant select on %s to chat_worker', v_object.name);
        end if;
        if v_object.held && '{INSERT, UPDATE, DELETE}' then
          execute pg_catalog.format('revoke insert, update, delete on %s from chat_worker', v_object.name);
        end if;
      elsif not v_object.held @> '{DELETE, INSERT, SELECT, UPDATE}' then
        execute pg_catalog.format('grant select, insert, update, delete on %s to chat_worker', v_object.name);
      end if;
    end loop;
    for v_object in
      select p.oid::regprocedure as name, bool_or(a.grantee = v_worker) as worker_executes, bool_or(a.grantee = 0) as public_executes
      from pg_catalog.pg_proc p, pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
      where p.pronamespace = 'graphile_worker'::regnamespace
      group by p.oid
    loop
      if not v_object.worker_executes then
        execute pg_catalog.format('grant execute on function %s to chat_worker', v_object.name);
      end if;
      if v_object.public_executes then
        execute pg_catalog.format('revoke execute on function %s from public', v_object.name);
      end if;
    end loop;
  end $$`);
  // Graphile Worker enables row-level security on its private tables with no policy (only their owner may use
  // them); chat_worker gets one policy per such table. Created only where missing: CREATE POLICY locks the table
  // (the job queue, which running workers use) in ACCESS EXCLUSIVE mode.
  await client.query(`do $$
  declare
    v_table regclass;
  begin
    for v_table in select c.oid::regclass from pg_catalog.pg_class c
                   where c.relnamespace = 'graphile_worker'::regnamespace and c.relkind = 'r' and c.relrowsecurity
                     and not exists (select from pg_catalog.pg_policy p where p.polrelid = c.oid and p.polname = 'chatd_worker') loop
      execute pg_catalog.format('create policy chatd_worker on %s for all to chat_worker using (true) with check (true)', v_table);
    end loop;
  end $$`);
}
