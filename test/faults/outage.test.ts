// The fault suite's outages: real worker processes on a private PostgreSQL cluster (support/cluster.ts) that the
// test stops, restarts and starts. Asserted: no worker process exits, every structured request gets exactly one
// receipt, and the outage spends no recovery. Printed, not asserted: the time from the database's return to the
// next committed step. The outages after a stop are longer than the lease, so a lease that ran out while the server
// was down must not be counted as a crash.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment } from "../support/chats.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, statusOf } from "../support/worker.ts";
import { createCluster, type PrivateCluster } from "./support/cluster.ts";
import { allAnswered, count, firstStepAfter, outcome, slowScript, structuredChats, until } from "./support/load.ts";
import { spawnFaultWorker, type FaultWorker } from "./support/workers.ts";

let cluster: PrivateCluster;
let root: string;
let user: string;
const LEASE_SECONDS = 4;

test.before(async () => {
  cluster = await createCluster();
  await fastSettings(cluster.db, { lease_seconds: LEASE_SECONDS, max_recoveries_per_turn: 3 });
  await setStructuredExperiment(cluster.db, true);
  root = await makeWorkspaces();
  user = await createUser(cluster.db, "olga");
});
test.after(async () => {
  await cluster.remove();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function stopAll(workers: FaultWorker[]): Promise<void> {
  await Promise.all(workers.map((worker) => worker.stop()));
}

function assertAlive(workers: FaultWorker[]): void {
  for (const [i, worker] of workers.entries()) assert.ok(worker.alive(), `worker ${i} exited; ${worker.describe()}`);
}

test("a worker started while the database is down waits for it, then runs turns", async () => {
  cluster.stop("fast");
  const worker = spawnFaultWorker(cluster.url, root);
  try {
    await worker.waitForLine(/database unreachable/);
    cluster.start();
    await worker.waitForLine(/worker started/);
    const chat = await createWorkerChat(cluster.db, user, JSON.stringify({ script: [{ text: "after the wait" }] }));
    await until("the turn", async () => (await statusOf(cluster.db, chat)) === "waiting" || undefined);
    assertAlive([worker]);
  } finally {
    if (!worker.alive()) cluster.start();
    assert.is(await worker.stop(), 0, "a graceful stop");
  }
});

test("a worker whose database stays away gives up after CHATD_DB_WAIT_SECONDS, with a clear error", async () => {
  cluster.stop("fast");
  try {
    const worker = spawnFaultWorker(cluster.url, root, { CHATD_DB_WAIT_SECONDS: "1" });
    assert.is.not(await worker.exited, 0);
    assert.match(worker.describe(), /not reachable within 1 s/);
  } finally {
    cluster.start();
  }
});

test("a server with no free connection ('too many clients') is waited for, never fatal", async () => {
  // Take every connection the server has (the worker connects as a superuser, so the reserved ones too).
  const hogs: pg.Client[] = [];
  for (;;) {
    const client = new pg.Client({ connectionString: cluster.url });
    try {
      await client.connect();
    } catch (error) {
      assert.is((error as { code?: unknown }).code, "53300");
      break;
    }
    hogs.push(client);
  }
  const worker = spawnFaultWorker(cluster.url, root);
  try {
    await worker.waitForLine(/database unreachable/);
    await Promise.all(hogs.splice(0).map((client) => client.end()));
    await worker.waitForLine(/worker started/);
    const chat = await createWorkerChat(cluster.db, user, JSON.stringify({ script: [{ text: "room at last" }] }));
    await until("the turn", async () => (await statusOf(cluster.db, chat)) === "waiting" || undefined);
    assertAlive([worker]);
  } finally {
    await Promise.all(hogs.map((client) => client.end()));
    await worker.stop();
  }
});

for (const [fault, act] of [
  ["stop -m immediate, then start", async () => {
    cluster.stop("immediate");
    await sleep((LEASE_SECONDS + 2) * 1000);
    cluster.start();
  }],
  ["pg_ctl restart -m fast", async () => {
    cluster.restart("fast");
  }],
  ["a 45 s outage (stop -m fast, then start)", async () => {
    cluster.stop("fast");
    await sleep(45_000);
    cluster.start();
  }],
] as const) {
  test(`${fault} under load with 3 workers: no worker exits, one receipt per request, no recovery spent`, async () => {
    const before = await outcome(cluster.db);
    const workers = [0, 1, 2].map(() => spawnFaultWorker(cluster.url, root, { CHATD_TEST_CONCURRENCY: "4" }));
    try {
      await Promise.all(workers.map((worker) => worker.waitForLine(/worker started/)));
      await structuredChats(cluster.db, user, 24, slowScript(150));
      // Barrier: turns are in flight (some requests answered, others still running) when the server goes away.
      await until("work in flight", async () =>
        (await count(cluster.db, "select 1 from chat_public.structured_output_requests where status <> 'pending'")) >= before.requests + 3
        && (await count(cluster.db, "select 1 from chat_private.chat_leases")) > 0);
      await act();
      const back = new Date();
      console.log(`  ${fault}: next step committed ${await firstStepAfter(cluster.db, back)} ms after the database came back`);
      await allAnswered(cluster.db);
      const after = await outcome(cluster.db);
      assertAlive(workers);
      assert.is(after.notOneReceipt, 0, "every request has exactly one receipt");
      assert.is(after.succeeded - before.succeeded, 24, "every request succeeded");
      assert.is(after.recoveries, before.recoveries, "the outage spent no recovery");
      assert.ok(workers.some((worker) => worker.lines.some((line) => /database unreachable/.test(line.msg))));
      for (const worker of workers) {
        assert.ok(worker.lines.filter((line) => /database unreachable/.test(line.msg)).length <= 1, "one line per outage");
      }
    } finally {
      await stopAll(workers);
    }
  });
}

test.run();
