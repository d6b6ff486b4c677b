// Turns in flight are not connections: one worker process at --concurrency 1024, every turn a 500 ms model step
// (scripted provider), beside this test's own client, against a private cluster with max_connections = 100. Every
// turn succeeds, and the worker never uses more connections than its pool size (32 by default), sampled from
// pg_stat_activity while the turns run.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, text } from "../support/chats.ts";
import { makeWorkspaces } from "../support/worker.ts";
import { DEFAULT_POOL_SIZE } from "../../worker/pools.ts";
import { createCluster, type PrivateCluster } from "./support/cluster.ts";
import { count, until } from "./support/load.ts";
import { spawnFaultWorker } from "./support/workers.ts";

let cluster: PrivateCluster;
let root: string;
let user: string;
const TURNS = 1024;
const APP = "chatd-inflight-worker";

test.before(async () => {
  cluster = await createCluster({ maxConnections: 100 });
  root = await makeWorkspaces();
  user = await createUser(cluster.db, "rosa");
});
test.after(async () => {
  await cluster.remove();
});

test(`${TURNS} slow turns in flight on one worker with max_connections = 100: every turn succeeds within the pool size`, async () => {
  const worker = spawnFaultWorker(cluster.url, root, { CHATD_TEST_CONCURRENCY: String(TURNS), PGAPPNAME: APP });
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await cluster.pool.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where application_name = $1", [APP]);
      peak = Math.max(peak, rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await worker.waitForLine(/worker started/);
    const script = text(JSON.stringify({ script: [{ text: "slow but fine", delay_ms: 500 }] }));
    await asUser(cluster.db, user, async (client) => {
      for (let i = 0; i < TURNS; i += 1) {
        await client.query("select chat_id from chat_public.create_chat(content => $1, workspace => null)", [script]);
      }
    });
    await until("every turn", async () =>
      (await count(cluster.db, "select 1 from chat_public.chats where status <> 'waiting'")) === 0 || undefined, 240_000);
    assert.is(await count(cluster.db, "select 1 from chat_public.chat_messages where role = 'assistant' and kind = 'message'"), TURNS);
    assert.ok(worker.alive(), worker.describe());
    assert.ok(worker.lines.every((line) => !/too many clients/.test(JSON.stringify(line)) || line.level < 50), "no error line");
  } finally {
    sampling = false;
    await sampler;
    await worker.stop();
  }
  console.log(`  ${TURNS} turns in flight: peak worker connections ${peak} (pool size ${DEFAULT_POOL_SIZE})`);
  assert.ok(peak > 0, "the sampler saw the worker");
  assert.ok(peak <= DEFAULT_POOL_SIZE, `the worker used ${peak} connections`);
});

test.run();
