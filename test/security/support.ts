// Helpers shared by the boundary matrices: fresh sessions (a session's temporary schema and role settings must not
// leak from one probe to the next, so the pool is not used) and the chatd_api login.
import pg from "pg";
import { withApiRole } from "../../src/api/api-role.ts";
import type { TestDatabase } from "../support/db.ts";

/** A new session as the test superuser (the owner of every chatd object). */
export async function ownerSession(db: TestDatabase): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return client;
}

/**
 * The chatd_api connection string: the local server trusts loopback, the embedded one needs scram. The runner sets
 * the role's password once (CHATD_API_PASSWORD) before the files start: two sessions altering the same role at
 * once fail with "tuple concurrently updated".
 */
export async function apiRoleUrl(db: TestDatabase): Promise<string> {
  if (!new URL(db.url).password) return withApiRole(db.url, null);
  const password = process.env.CHATD_API_PASSWORD;
  if (!password) throw new Error("CHATD_API_PASSWORD is not set: run the tests through `npm test`");
  return withApiRole(db.url, password);
}

/** A new session logged in as chatd_api, the API's login role. */
export async function apiSession(db: TestDatabase): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: await apiRoleUrl(db) });
  await client.connect();
  return client;
}

/** Runs fn in a new session that switched to `role` (with `jwt.claims.sub` when userId is given), then ends it. */
export async function inSession<T>(connect: () => Promise<pg.Client>, role: string, userId: string | null,
  fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connect();
  try {
    await client.query("select set_config('role', $1, false), set_config('jwt.claims.sub', $2, false)", [role, userId ?? ""]);
    return await fn(client);
  } finally {
    await client.end();
  }
}
