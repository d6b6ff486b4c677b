// test-runner: serial
// chatd on a real HA PostgreSQL (test/ha/support/patroni-cluster.ts: etcd, two Patroni/PostgreSQL 15 nodes with
// synchronous_mode, HAProxy on Patroni's /primary check), run as an operator runs it: `chatd migrate`, the API
// (`chatd serve`, which runs a worker too) and two `chatd worker` processes, all through HAProxy. Under load from
// @chatd/client (structured requests with idempotency keys, scripted provider, each followed on the live stream),
// the cluster goes through a planned switchover, a kill -9 of the primary's postmaster, and the loss of the
// primary's node (kill -9 of its Patroni, postmaster and backends; it then returns as a replica). Asserted: every
// acknowledged request has exactly one receipt, none lost or doubled; no chatd process exits; no recovery is spent
// (with lease_seconds below the node loss's outage); every stream delivered every message of its chat, in order.
// Printed per event: how long writes through HAProxy failed (a probe committing every 20 ms). Runs alone (it loads
// both cores); the cluster takes 10-20 s to start.
import { createChatdClient, type ChatdClient } from "@chatd/client";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { launch, type ChatdProcess } from "../support/chatd-process.ts";
import { runChatd } from "../support/cli.ts";
import { makeWorkspaces } from "../support/worker.ts";
import { slowScript, until } from "../faults/support/load.ts";
import { startLoad, WriteProbe, type Load } from "./support/ha-load.ts";
import { HAPROXY_CHECKS, missingPrograms, PATRONI_TIMINGS, startHaCluster, type HaCluster, type HaNode } from "./support/patroni-cluster.ts";

// Shorter than the node loss's outage (~11 s with the timings above): a failover must not count as a recovery
// however long it takes, so the sweep's server-epoch grace is what keeps recoveries at zero here.
const LEASE_SECONDS = 8;
const JWT_SECRET = "ha-test-secret-0123456789abcdefghijklmnopqrstuvwxyz";

let cluster: HaCluster | undefined;
let workspaces: string | undefined;
const processes: ChatdProcess[] = [];
const clients: ChatdClient[] = [];
let load: Load | undefined;
let probe: WriteProbe | undefined;
const measured: Measured[] = [];

test.after(async () => {
  load?.abort();
  await probe?.stop();
  for (const client of clients) await client.close().catch(() => undefined);
  for (const chatd of processes) chatd.child.kill("SIGKILL");
  await cluster?.remove();
  if (workspaces != null) rmSync(workspaces, { recursive: true, force: true });
});

test("Debian's patroni, etcd-server and haproxy are installed (.ci/run installs them)", () => {
  assert.equal(missingPrograms(), [], "install them: apt-get install -y patroni etcd-server haproxy");
});

/** A superuser pool on the chatd database through HAProxy, for the test's own reads (it survives failovers). */
function adminPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2000 });
  pool.on("error", () => undefined);
  return pool;
}

async function scalar(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  return until(sql, async () => Number((await pool.query<{ n: string }>(sql, params)).rows[0]!.n));
}

function start(args: string[], env: NodeJS.ProcessEnv): ChatdProcess {
  const chatd = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), ...args], { cwd: projectRoot, env });
  cluster!.track(chatd.child.pid!);
  processes.push(chatd);
  return chatd;
}

interface Measured { event: string; probeGapMs: number; probeFailures: number; clientGaveUp: number; streamsBroken: number; seconds: number }

test("switchover, postmaster kill and node loss under load: one receipt each, no exit, no recovery, streams whole", async () => {
  try {
    await run();
  } catch (error) {
    await explain();
    throw error;
  }
});

/** For a failed run: each process's warnings and lifecycle lines, what the sessions on the primary wait for. */
async function explain(): Promise<void> {
  const lifecycle = /started|reachable|unreachable|stopped|listener|cut off|exited|failed/;
  for (const chatd of processes) {
    const lines = chatd.lines.filter((l) => (l.level ?? 50) >= 40 || lifecycle.test(String(l.msg ?? "")))
      .map((l) => `${new Date(Number(l.time)).toISOString().slice(11, 23)} ${String(l.msg ?? l.raw).slice(0, 160)} ${String(l.code ?? "")}`);
    console.log(`-- ${chatd.child.spawnargs.slice(2, 3).join(" ")} (pid ${chatd.child.pid}, exit ${chatd.child.exitCode}):\n${lines.join("\n")}`);
  }
  console.log("-- events measured before the failure:", measured);
  console.log("-- client give-ups:", load?.retries.slice(-5), "\n-- first sender failure:", load?.failure()?.cause);
  if (cluster == null) return;
  console.log("-- members:", JSON.stringify(await cluster.members()));
  const client = new pg.Client({ connectionString: cluster.url("chatd"), connectionTimeoutMillis: 2000, query_timeout: 5000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(`select pid, usename, state, wait_event_type, wait_event, now() - query_start as for, left(query, 100) as query
      from pg_stat_activity where datname = 'chatd' and state <> 'idle' and pid <> pg_backend_pid()`);
    console.log("-- busy sessions on the primary:", rows);
    for (const sql of ["select status, count(*)::int from chat_public.chats group by 1", "select count(*)::int as leases from chat_private.chat_leases",
      "select * from chat_private.job_queue", "select status, count(*)::int from chat_public.structured_output_requests group by 1",
      "select max(created_at) as last_message, now() from chat_public.chat_messages", "select * from chat_private.worker_processes"]) {
      console.log(`-- ${sql}:`, (await client.query(sql)).rows);
    }
  } catch (error) {
    console.log("-- the primary did not answer:", String(error));
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function run(): Promise<void> {
  const suiteStart = Date.now();
  cluster = await startHaCluster();
  await cluster.waitForHealthy();
  const clusterUpMs = Date.now() - suiteStart;
  const setup = new pg.Client({ connectionString: cluster.url("postgres") });
  await setup.connect();
  await setup.query("create database chatd");
  await setup.end();
  const url = cluster.url("chatd");
  const migrated = await runChatd(["migrate"], url);
  assert.is(migrated.code, 0, `chatd migrate through HAProxy:\n${migrated.out}`);
  const db = adminPool(url);
  await db.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  await db.query(`insert into chat_private.settings (name, value, description) values ('lease_seconds', $1::text::jsonb, 'ha test')
                  on conflict (name) do update set value = excluded.value`, [String(LEASE_SECONDS)]);
  workspaces = await makeWorkspaces();
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATABASE_URL: url, CHATD_LOG_FORMAT: "json", CHATD_LOG_LEVEL: "info", CHATD_WORKSPACES_ROOT: workspaces,
    CHATD_JWT_SECRET: JWT_SECRET, CHATD_DB_WAIT_SECONDS: "60",
  };
  const token = await runChatd(["token", "--user", "ha"], url, undefined, { CHATD_JWT_SECRET: JWT_SECRET });
  assert.is(token.code, 0, token.out);
  const api = start(["serve", "--port", "0"], env);
  const workers = [0, 1].map(() => start(["worker", "--metrics-port", "0", "--concurrency", "4"], env));
  const running = await api.waitFor("the API running", (line) => line.msg === "chatd is running");
  await Promise.all(workers.map((worker) => worker.waitFor("a worker running", (line) => line.msg === "worker started")));
  const client = createChatdClient({ url: `${String(running.url)}/graphql`, token: token.out.trim().split("\n").at(-1)! });
  clients.push(client);
  const writes = new WriteProbe(cluster.url("postgres"));
  probe = writes;
  const traffic = startLoad(client, 4, slowScript(150));
  load = traffic;
  // Progress is counted only while every sender runs: a sender that failed ends the wait with its error.
  const receipts = async () => {
    const failed = traffic.failure();
    if (failed) throw failed;
    return scalar(db, "select count(*) as n from chat_public.chat_messages where kind = 'receipt'");
  };

  /** Runs one event once work is in flight, waits until the cluster is whole and chatd made progress after it. */
  const event = async (name: string, act: (primary: HaNode, standby: HaNode) => Promise<void>) => {
    const { primary, standby } = await cluster!.waitForHealthy();
    const before = await receipts();
    await until(`${name}: requests answered and chats leased before the event`, async () =>
      (await receipts()) >= before + 3 && (await scalar(db, "select count(*) as n from chat_private.chat_leases")) > 0);
    const retriesBefore = traffic.retries.length;
    const brokenBefore = traffic.streamBroken.length;
    const at = Date.now();
    await act(primary, standby);
    await cluster!.waitForHealthy();
    const progress = await receipts();
    await until(`${name}: receipts after the event`, async () => (await receipts()) >= progress + 3);
    const settled = Date.now();
    const gap = writes.gap(at, settled);
    measured.push({ event: name, probeGapMs: gap.ms, probeFailures: gap.failures,
      clientGaveUp: traffic.retries.length - retriesBefore, streamsBroken: traffic.streamBroken.length - brokenBefore, seconds: Math.round((settled - at) / 100) / 10 });
  };

  await event("switchover", async (primary, standby) => {
    await cluster!.switchover(primary, standby);
    await cluster!.waitForPrimary(primary);
  });
  await event("postmaster kill", async (primary) => {
    const at = Date.now();
    cluster!.killPostmaster(primary);
    // Patroni keeps the leader key and answers /primary all along: the outage shows in the probe's writes.
    await until("the probe seeing the outage", async () => writes.failedSince(at) || undefined, 30_000);
  });
  await event("node loss", async (primary) => {
    cluster!.killNode(primary);
    await cluster!.waitForPrimary(primary);
    cluster!.startNode(primary);
  });

  await traffic.stop();
  await writes.stop();
  console.log(`HA run (load ${loadavg().map((l) => l.toFixed(2)).join(" ")}): cluster up in ${(clusterUpMs / 1000).toFixed(1)} s; ${traffic.sent.length} requests, ${traffic.retries.length} client give-ups `
    + `re-sent with their key; Patroni ttl ${PATRONI_TIMINGS.ttl} loop_wait ${PATRONI_TIMINGS.loop_wait} retry_timeout `
    + `${PATRONI_TIMINGS.retry_timeout}; HAProxy ${HAPROXY_CHECKS}; lease_seconds ${LEASE_SECONDS}`);
  for (const m of measured) {
    console.log(`  ${m.event.padEnd(16)} write gap ${(m.probeGapMs / 1000).toFixed(1)} s (${m.probeFailures} failed probe writes); `
      + `client gave up ${m.clientGaveUp}×; `
      + `streams that threw instead of reconnecting ${m.streamsBroken}; settled in ${m.seconds} s`);
  }

  const answered = await until("every request answered", async () =>
    (await scalar(db, "select count(*) as n from chat_public.structured_output_requests where status = 'pending'")) === 0 || undefined);
  assert.ok(answered);

  for (const [i, chatd] of processes.entries()) {
    assert.ok(chatd.child.exitCode == null && chatd.child.signalCode == null,
      `chatd process ${i} (${chatd.child.spawnargs.slice(2, 3).join(" ")}) exited:\n${chatd.lines.slice(-20).map((l) => l.raw).join("\n")}`);
  }
  const ids = traffic.sent.map((s) => s.input.structuredOutputRequestId!);
  const { rows: requests } = await db.query<{ id: string; status: string; receipts: number }>(
    `select r.id, r.status, (select count(*)::int from chat_public.chat_messages m
                             where m.kind = 'receipt' and m.structured_output_request_id = r.id) as receipts
     from chat_public.structured_output_requests r`);
  const byId = new Map(requests.map((r) => [r.id, r]));
  assert.is(new Set(ids).size, ids.length, "every acknowledged key got a request of its own");
  assert.equal(ids.filter((id) => !byId.has(id)), [], "no acknowledged request is lost");
  assert.is(requests.length, ids.length, "no request beyond the acknowledged ones (no key made two)");
  assert.equal(requests.filter((r) => r.receipts !== 1), [], "every request has exactly one receipt");
  assert.equal(requests.filter((r) => r.status !== "succeeded"), [], "every request succeeded");
  const chats = await scalar(db, "select count(*) as n from chat_public.chats");
  assert.is(chats, traffic.sent.filter((s) => s.key.startsWith("ha-create-")).length + 1, "one chat per create key");
  const recoveries = await scalar(db, "select coalesce(sum(recoveries), 0) as n from chat_private.turn_progress");
  assert.is(recoveries, 0, "no recovery spent for a failover");

  // The streams: what each delivered is exactly the chat's messages in its range, in order, none skipped or repeated.
  const messages = async (chatId: string, after: string | null, through: string | null) => (await db.query<{ id: string }>(
    `select m.id::text from chat_public.chat_messages m where m.chat_id = $1 and m.id > coalesce($2::bigint, 0)
       and m.id <= coalesce($3::bigint, 9223372036854775807) order by m.id`, [chatId, after, through])).rows.map((r) => r.id);
  const mismatched: string[] = [];
  for (const sent of traffic.sent.filter((s) => s.key.startsWith("ha-create-"))) {
    const stored = await messages(sent.input.chatId, sent.input.messageId, sent.streamed.at(-1) ?? null);
    if (sent.streamed.join() !== stored.join()) mismatched.push(`${sent.key} after ${sent.input.messageId}: streamed [${sent.streamed.join()}], stored [${stored.join()}]`);
  }
  assert.equal(mismatched, [], "every request's stream delivered each message of its chat after the input once, in order");
  const long = traffic.longChat()!;
  assert.equal(long.streamed, await messages(long.chatId, null, long.streamed.at(-1) ?? null),
    "the stream open through every failover delivered every message of its chat once, in order");

  for (const chatd of processes) chatd.child.kill("SIGTERM");
  // A deadline, not a wait: a process still running a minute after SIGTERM hangs, and is reported as such.
  const hung = { code: -1, signal: "hung" };
  const exits = await Promise.all(processes.map((chatd) => Promise.race([chatd.exited,
    new Promise((resolve) => setTimeout(() => resolve(hung), 60_000).unref())])));
  assert.equal(exits, processes.map(() => ({ code: 0, signal: null })), "every chatd process stops cleanly on SIGTERM");
  await db.end();
  // Last, so that a failure here still leaves every figure above measured and printed.
  assert.equal(traffic.streamBroken, [], "@chatd/client's event streams reconnected by themselves (none threw a retryable error)");
}

test.run();
