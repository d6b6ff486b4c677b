// Graphile Worker's queue pool (worker/pools.ts) sends a job statement refused on its connection (25006 from a
// server that is not the primary) again on a new connection. Every checkout of a small pool may be refused at once
// (a fetch, completions and failures after a read-only window): a retry that held its refused connection while it
// waited for a new one deadlocked the pool, and the worker's runner and its SIGTERM stop waited forever. A session
// with default_transaction_read_only stands in for the standby (same SQLSTATE, a connection that keeps refusing).
import type pg from "pg";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPool, DatabaseHealth } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
const log = pino({ level: "silent" });

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query("create table queue_rows (id int)");
});
test.after(async () => {
  await db.drop();
});

function queuePool(max: number): pg.Pool {
  return createPool({ connectionString: db.url, max }, log, "queue", { health: new DatabaseHealth(log), retryStatements: () => true });
}

/** `work`, or "deadlocked" when it has not settled within the bound (the old behaviour never settles). */
async function settles<T>(work: Promise<T>, ms = 20_000): Promise<T | "deadlocked"> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"deadlocked">((resolve) => {
    timer = setTimeout(() => resolve("deadlocked"), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

test("every checkout of a full pool refused at once: each is sent again on a new connection, none deadlocks", async () => {
  const pool = queuePool(2);
  let deadlocked = false;
  try {
    const checkouts = [await pool.connect(), await pool.connect()];
    for (const client of checkouts) await client.query("set default_transaction_read_only = on");
    const inserted = await settles(Promise.all(checkouts.map(async (client, i) => {
      try {
        return (await client.query("insert into queue_rows values ($1) returning id", [i])).rows[0].id as number;
      } finally {
        client.release();
      }
    })));
    deadlocked = inserted === "deadlocked";
    assert.equal(inserted, [0, 1], "both statements ran on new connections");
    assert.is(pool.totalCount <= 2, true, "never more connections than the pool's size");
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from queue_rows");
    assert.is(rows[0]!.n, 2);
  } finally {
    // A deadlocked pool never ends (its connections stay checked out): the test database's drop closes them.
    if (!deadlocked) await pool.end();
  }
});

test("a connection first handed out to a job statement serves pool.query too (Graphile Worker's cron)", async () => {
  const pool = queuePool(1);
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on("uncaughtException", onUncaught);
  try {
    const client = await pool.connect();
    await client.query("select 1");
    client.release();
    const { rows } = await pool.query<{ n: number }>("select 2 as n");
    assert.is(rows[0]!.n, 2);
    assert.is((await pool.query<{ n: number }>("select 3 as n")).rows[0]!.n, 3, "the connection was released once");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(uncaught, [], "no double release");
  } finally {
    process.off("uncaughtException", onUncaught);
    await pool.end();
  }
});

test("a statement of the checkout's own error is thrown at once and the checkout stays usable", async () => {
  const pool = queuePool(1);
  try {
    const client = await pool.connect();
    try {
      await client.query("select 1/0").then(() => assert.unreachable("refused"), (error: { code?: string }) => assert.is(error.code, "22012"));
      assert.is((await client.query("select 4 as n")).rows[0].n, 4);
    } finally {
      client.release();
    }
    assert.throws(() => client.release(), /already released/);
  } finally {
    await pool.end();
  }
});

test.run();
