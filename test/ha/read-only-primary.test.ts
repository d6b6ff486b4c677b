// Real worker processes on a private cluster whose primary turns read-only under load, as a connection through
// HAProxy sees a demoted or restarting node during a Patroni switchover or a postmaster restart: every write
// (step commits, lease renewals, Graphile Worker's batched job completions, alive reports, the sweep) is refused
// with 25006 until the node is writable again. Asserted: no worker exits, every request gets exactly one receipt,
// and no recovery is spent (a chat_run refused mid-turn keeps its lease and resumes; it never leaves the lease to
// expire), and both workers then finish their SIGTERM stop. The read-only window ends once the server log shows both a
// chatd statement and a job completion refused (barriers, not times), and it is shorter than a lease.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment } from "../support/chats.ts";
import { fastSettings, makeWorkspaces } from "../support/worker.ts";
import { createCluster, type PrivateCluster } from "../faults/support/cluster.ts";
import { allAnswered, count, outcome, slowScript, structuredChats, until } from "../faults/support/load.ts";
import { spawnFaultWorker, type FaultWorker } from "../faults/support/workers.ts";

let cluster: PrivateCluster;
let root: string;
let user: string;
const LEASE_SECONDS = 8;
const HELD_JOBS = 2;
const CONCURRENCY = 13;

test.before(async () => {
  cluster = await createCluster();
  await fastSettings(cluster.db, { lease_seconds: LEASE_SECONDS, max_recoveries_per_turn: 3 });
  await setStructuredExperiment(cluster.db, true);
  root = await makeWorkspaces();
  user = await createUser(cluster.db, "rosa");
});
test.after(async () => {
  await cluster.remove();
});

/** Sets default_transaction_read_only server-wide (every session's next transaction), from a writable session. */
async function readOnly(on: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url, options: "-c default_transaction_read_only=off" });
  await client.connect();
  try {
    await client.query(on ? "alter system set default_transaction_read_only = on" : "alter system reset default_transaction_read_only");
    await client.query("select pg_reload_conf()");
  } finally {
    await client.end();
  }
}

const COMPLETION_REFUSED = /read-only transaction\n[^\n]*STATEMENT:\s+delete from "graphile_worker"\._private_jobs/;
// A refused function call has CONTEXT lines between the ERROR and its STATEMENT.
const CHATD_REFUSED = /read-only transaction(?:\n[^\n]*){0,8}?\n[^\n]*STATEMENT:\s+[^\n]*chat_private\./;

/** Stops a worker by SIGTERM; a stop that never ends (the shutdown hang this file guards) fails instead of hanging. */
async function stopWithin(worker: FaultWorker, ms: number): Promise<number | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), ms);
  });
  const code = await Promise.race([worker.stop(), hung]);
  clearTimeout(timer);
  if (code === "hung") worker.child.kill("SIGKILL");
  return code;
}

test("the primary turns read-only under load: no worker exits, one receipt per request, no recovery spent", async () => {
  const before = await outcome(cluster.db);
  // Concurrency above the load: every job runs at once, the held jobs (below) included. A pool size of 16 leaves
  // Graphile Worker two queue connections (worker/pools.ts), its LISTEN and one more: a retry that needed a second
  // connection while holding its first could never get one.
  const workers = [0, 1].map(() => spawnFaultWorker(cluster.url, root,
    { CHATD_TEST_CONCURRENCY: String(CONCURRENCY), CHATD_WORKER_POOL_SIZE: "16" }));
  const stopped: (number | "hung")[] = [];
  try {
    await Promise.all(workers.map((worker) => worker.waitForLine(/worker started/)));
    const chats = await structuredChats(cluster.db, user, 16, slowScript(100));
    // Jobs that end without writing (their chats are not in requires_action), held inside their statement by the
    // test's row locks until the server is read-only: their completions are then refused together, whatever the
    // timing of the load.
    const held = chats.slice(0, HELD_JOBS);
    const lock = await cluster.pool.connect();
    try {
      await lock.query("begin");
      await lock.query("select 1 from chat_public.chats where id = any($1::uuid[]) for update", [held]);
      await cluster.pool.query("select graphile_worker.add_job('chat_requires_action_deadline', json_build_object('chat_id', id)) from unnest($1::uuid[]) id", [held]);
      await until("work in flight and the held jobs waiting on the row locks", async () =>
        (await count(cluster.db, "select 1 from chat_public.structured_output_requests where status <> 'pending'")) >= before.requests + 2
        && (await count(cluster.db, "select 1 from chat_private.chat_leases")) > 0
        && (await count(cluster.db, "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%cancel_requires_action%'")) === HELD_JOBS);
      const logFrom = cluster.log().length;
      await readOnly(true);
      try {
        await until("a chatd statement refused as read-only", async () => CHATD_REFUSED.test(cluster.log().slice(logFrom)), 60_000);
        await lock.query("commit");
        await until("a job completion refused as read-only", async () => COMPLETION_REFUSED.test(cluster.log().slice(logFrom)), 60_000);
      } finally {
        await readOnly(false);
      }
    } finally {
      await lock.query("rollback").catch(() => undefined);
      lock.release();
    }
    await allAnswered(cluster.db);
    const after = await outcome(cluster.db);
    for (const [i, worker] of workers.entries()) assert.ok(worker.alive(), `worker ${i} exited; ${worker.describe()}`);
    assert.is(after.notOneReceipt, 0, "every request has exactly one receipt");
    assert.is(after.succeeded - before.succeeded, 16, "every request succeeded");
    assert.is(after.recoveries, before.recoveries, "the read-only window spent no recovery");
    for (const worker of workers) stopped.push(await stopWithin(worker, 60_000));
    assert.equal(stopped, [0, 0], "both workers finish their SIGTERM stop and exit 0");
  } finally {
    await Promise.all(workers.map((worker) => stopWithin(worker, 60_000)));
  }
});

test.run();
