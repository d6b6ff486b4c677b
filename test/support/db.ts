// Each test file gets its own database cloned from the template that scripts/test.ts migrated once.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { withDatabase } from "../../src/db/database.ts";

export interface TestDatabase {
  url: string;
  /** Superuser pool (the owner of every chatd object). */
  pool: pg.Pool;
  /** Runs fn in a transaction as `role`, with `jwt.claims.sub` set when userId is given; always rolls back unless commit. */
  as<T>(role: string, userId: string | null, fn: (client: pg.PoolClient) => Promise<T>, commit?: boolean): Promise<T>;
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.CHATD_TEST_ADMIN_URL;
  if (!url) throw new Error("CHATD_TEST_ADMIN_URL is not set: run the tests through `npm test`");
  return url;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.CHATD_TEST_TEMPLATE;
  if (!template) throw new Error("CHATD_TEST_TEMPLATE is not set: run the tests through `npm test`");
  return createDatabase(`template ${pg.escapeIdentifier(template)}`);
}

/** An empty database (no chatd schema), for tests that migrate it themselves. */
export function createEmptyDatabase(): Promise<TestDatabase> {
  return createDatabase("");
}

async function createDatabase(clause: string): Promise<TestDatabase> {
  const runner = process.env.CHATD_TEST_TEMPLATE?.split("_").pop();
  const name = `chatd_t_${runner}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`create database ${pg.escapeIdentifier(name)} ${clause}`);
  await admin.end();
  const url = withDatabase(adminUrl(), name);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection can be ended from the server (a test terminating backends, the database dropped at the
  // end); without a listener, pg would crash the whole test process instead of failing one query.
  pool.on("error", () => {});
  return onPool(url, pool, async () => {
    await pool.end();
    const dropper = new pg.Client({ connectionString: adminUrl() });
    await dropper.connect();
    await dropper.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await dropper.end();
  });
}

/** A TestDatabase on an existing superuser pool (the fault suite's private cluster: test/faults/support). */
export function onPool(url: string, pool: pg.Pool, drop: () => Promise<void>): TestDatabase {
  return {
    url,
    pool,
    async as(role, userId, fn, commit = false) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        await client.query("select set_config('role', $1, true), set_config('jwt.claims.sub', $2, true)", [role, userId ?? ""]);
        const result = await fn(client);
        await client.query(commit ? "commit" : "rollback");
        return result;
      } catch (error) {
        await client.query("rollback").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    drop,
  };
}

/** The SQLSTATE of a rejected promise; fails loudly when it resolved. */
export async function sqlState(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") return code;
    throw error;
  }
  throw new Error("expected the statement to fail, but it succeeded");
}
