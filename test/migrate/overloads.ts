// Overloaded functions in chatd's schemas. A changed signature is dropped in a migration; `create or replace` with
// new arguments leaves the old function behind, callable and stale, on every database that had it.
import type pg from "pg";

/** Names that may legitimately have several signatures: the previous release's, kept for one release (0130). */
export const ALLOWED_OVERLOADS: ReadonlySet<string> = new Set(["chat_private.idempotent_result", "chat_private.remember_result"]);

/** `schema.name(args)` of every function whose name has more than one signature and is not allowed to. */
export async function chatdOverloads(db: pg.Pool | pg.ClientBase): Promise<string[]> {
  const { rows } = await db.query<{ name: string; signature: string }>(
    `select p.pronamespace::regnamespace::text || '.' || p.proname as name, p.oid::regprocedure::text as signature
     from pg_proc p
     where p.pronamespace in ('chat_public'::regnamespace, 'chat_private'::regnamespace)
       and (p.pronamespace, p.proname) in (select pronamespace, proname from pg_proc group by 1, 2 having count(*) > 1)
     order by 2`);
  return rows.filter((row) => !ALLOWED_OVERLOADS.has(row.name)).map((row) => row.signature);
}
