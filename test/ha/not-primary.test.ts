// A connection that reaches a server which is not the primary (a demoted primary, a primary restarting read-only
// before its promotion, as HAProxy routes for a few seconds during a Patroni failover) is a lost connection to chatd:
// the refusal is classified as one (isConnectionError) and the pooled connection is closed, never handed out again,
// so the next statement opens a new connection through the proxy. A session with default_transaction_read_only
// stands in for the standby here: its refusals carry the same SQLSTATE (25006); a real standby's are asserted in
// test/ha/promotion.test.ts.
import type pg from "pg";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPool, DatabaseHealth, isConnectionError } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
const log = pino({ level: "silent" });

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

async function refused(run: () => Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("the statement was expected to be refused");
}

const pid = async (query: (sql: string) => Promise<pg.QueryResult>) => (await query("select pg_backend_pid() as pid")).rows[0].pid as number;

for (const resilient of [false, true]) {
  const kind = resilient ? "a worker pool (waits for the database)" : "the API pool";
  test(`${kind}: a write refused as read-only (25006) is a connection error and its connection is not reused`, async () => {
    const pool = createPool({ connectionString: db.url, max: 1 }, log, "test",
      resilient ? { health: new DatabaseHealth(log) } : undefined);
    try {
      const first = await pid((sql) => pool.query(sql));
      await pool.query("set default_transaction_read_only = on");
      const error = await refused(() => pool.query("create table t_refused (id int)"));
      assert.is(error.code, "25006");
      assert.match(error.message, /read-only transaction/);
      assert.ok(isConnectionError(error), "classified as a lost connection");
      assert.is.not(await pid((sql) => pool.query(sql)), first, "the next statement runs on a new connection");
      await pool.query(`create table t_written_${String(resilient)} (id int)`);
    } finally {
      await pool.end();
    }
  });

  test(`${kind}: a checked-out client released after a read-only refusal is closed (Graphile Worker's checkouts)`, async () => {
    const pool = createPool({ connectionString: db.url, max: 1 }, log, "test",
      resilient ? { health: new DatabaseHealth(log) } : undefined);
    try {
      const client = await pool.connect();
      // Released on every path: a client held by a failed assertion would make pool.end() wait forever.
      const first = await pid((sql) => client.query(sql));
      await client.query("set default_transaction_read_only = on");
      const error = await refused(() => client.query("create table t_refused (id int)"));
      assert.is(error.code, "25006");
      assert.ok(isConnectionError(error));
      client.release();
      const next = await pool.connect();
      try {
        assert.is.not(await pid((sql) => next.query(sql)), first, "a new connection");
      } finally {
        next.release();
      }
      // A statement's own error (not the connection's) keeps the connection.
      const again = await pool.connect();
      const kept = await pid((sql) => again.query(sql));
      assert.is((await refused(() => again.query("select 1/0"))).code, "22012");
      again.release();
      assert.is(await pid((sql) => pool.query(sql)), kept, "the connection stays after a statement error");
    } finally {
      await pool.end();
    }
  });
}

test.run();
