// Every /v1 statement runs as the caller, exactly as PostGraphile runs GraphQL (src/api/auth.ts pgSettingsFor):
// the chat_user role and the token's `sub` set for the transaction, so the same functions, grants and row-level
// security decide. There is no other way in.
import type pg from "pg";
import { pgSettingsFor } from "../auth.ts";

export const STATEMENT_TIMEOUT_MS = 30_000;

export async function asUser<T>(pool: pg.Pool, userId: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const settings = pgSettingsFor({ kind: "user", userId }, STATEMENT_TIMEOUT_MS);
    await client.query("select set_config(key, value, true) from jsonb_each_text($1::jsonb)", [JSON.stringify(settings)]);
    const result = await work(client);
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
