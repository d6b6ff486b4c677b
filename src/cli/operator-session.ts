// The operator's commands (`chatd ops`, `chatd batch`, `chatd token`) work as chat_operator, not as the owner:
// DATABASE_URL may be the owner's login (a superuser, or a managed owner made a member by migration 0051) or any
// login that is a member of chat_operator. The role is a startup option of the connection (run-time-roles.ts), so a
// login that may not take it fails to connect instead of working with its own rights.
import pg from "pg";
import type { ResolvedDatabase } from "../db/database.ts";
import { directUrl } from "../db/pooler.ts";
import { OPERATOR_ROLE, withRole } from "../db/run-time-roles.ts";

/** Runs `fn` with a connection working as chat_operator; `url` is that connection's string (for LISTEN). */
export async function withOperatorClient<T>(open: () => Promise<ResolvedDatabase>,
  fn: (client: pg.Client, url: string) => Promise<T>): Promise<T> {
  const db = await open();
  try {
    // Direct, not through a transaction-mode pooler: the startup option and `chatd batch`'s LISTEN need a session.
    const url = withRole(directUrl(db.url), OPERATOR_ROLE);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client, url);
    } finally {
      await client.end();
    }
  } finally {
    await db.stop();
  }
}

/**
 * The id of the user called `name`, created when missing (chat_operator may insert a name, nothing else). A
 * concurrent creation of the same name is committed but not in this statement's snapshot: the second read sees it.
 */
export async function ensureUser(client: pg.ClientBase, name: string): Promise<string> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const { rows } = await client.query<{ id: string }>(
      `with created as (insert into chat_public.users (name) values ($1) on conflict (name) do nothing returning id)
       select id from created union all select id from chat_public.users where name = $1 limit 1`, [name]);
    if (rows[0] != null) return rows[0].id;
  }
  throw new Error(`user ${name} could not be created or read`);
}
