// createPool (src/db/pool.ts): a connection that the server ends, idle in the pool or checked out between queries,
// is logged and replaced; it never becomes an unhandled 'error' event, which would end this process (and the test
// run with it). Barriers: the test waits for the log line the failure produces, never for time.
import { Writable } from "node:stream";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createPool } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

/** A logger whose warn lines resolve the waiters registered for their message. */
function capturingLogger() {
  const lines: { msg: string; pool: string }[] = [];
  const waiters: { msg: string; resolve(): void }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = JSON.parse(chunk.toString()) as { msg: string; pool: string };
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.msg === line.msg)) waiter.resolve();
      done();
    },
  });
  const log = pino({ level: "warn" }, stream);
  const logged = (msg: string) => new Promise<void>((resolve) => {
    if (lines.some((line) => line.msg === msg)) resolve();
    else waiters.push({ msg, resolve });
  });
  return { log, lines, logged };
}

async function terminate(pid: number): Promise<void> {
  const { rows } = await db.pool.query<{ ok: boolean }>("select pg_terminate_backend($1) as ok", [pid]);
  assert.ok(rows[0]!.ok, "the backend was terminated");
}

test("an idle connection the server ends is logged and replaced; the next query works", async () => {
  const { log, lines, logged } = capturingLogger();
  const pool = createPool({ connectionString: db.url, max: 1 }, log, "test");
  try {
    const pid = (await pool.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
    await terminate(pid);
    await logged("database connection failed");
    assert.equal(lines.map((line) => [line.msg, line.pool]), [["database connection failed", "test"]], "one warning");
    const next = (await pool.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
    assert.is.not(next, pid, "a new connection");
  } finally {
    await pool.end();
  }
});

test("a checked-out connection the server ends between queries is logged; its next query fails, the pool goes on", async () => {
  const { log, logged } = capturingLogger();
  const pool = createPool({ connectionString: db.url, max: 1 }, log, "test");
  try {
    const client = await pool.connect();
    const pid = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
    await terminate(pid);
    await logged("database connection failed");
    const failed = await client.query("select 1").then(() => null, (error: Error) => error);
    assert.ok(failed instanceof Error, "the dead connection's query fails");
    client.release(failed);
    const { rows } = await pool.query<{ one: number }>("select 1 as one");
    assert.is(rows[0]!.one, 1);
  } finally {
    await pool.end();
  }
});

test.run();
