// A rolling deploy under load: release 5823e57's API and workers (test/support/old-release-process.ts, real
// processes) serve structured requests while this build's `chatd migrate` runs against their database. Each old
// process keeps working through the migration and after it: no error reaches a client or a worker step (no 42883,
// no deadlock, no lost row), no recovery is spent, every request gets exactly one receipt; each stops cleanly
// (SIGTERM, exit 0) when the deploy replaces it. The second test builds the lock cycle that load produced (a
// deadlock the running release could lose) on purpose, with barriers.
import { join } from "node:path";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { launch, type ChatdProcess } from "../support/chatd-process.ts";
import { runChatd } from "../support/cli.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/db.ts";
import { waitFor } from "../support/wait.ts";
import { installRelease, RELEASE } from "./release.ts";

const databases: TestDatabase[] = [];
const processes: ChatdProcess[] = [];
test.after(async () => {
  for (const process of processes) process.child.kill("SIGKILL");
  for (const db of databases) await db.drop();
});

function oldRelease(db: TestDatabase, args: string[]): ChatdProcess {
  const started = launch(process.execPath, [join(projectRoot, "test", "support", "old-release-process.ts"), ...args],
    { cwd: projectRoot, env: { ...process.env, DATABASE_URL: db.url } });
  processes.push(started);
  return started;
}

const count = (processes: ChatdProcess[], event: string) =>
  processes.reduce((sum, p) => sum + p.lines.filter((line) => line.event === event).length, 0);
// Anything unexpected: an error, a line that is not an event, or a chat "not found" (no chat is ever deleted here).
const errors = (processes: ChatdProcess[]) => processes.flatMap((p) => p.lines.filter((line) =>
  line.event === "error" || line.event === undefined || line.code === "CHNTF"));

test(`release ${RELEASE} under load through \`chatd migrate\` to this build: no error, no recovery, one receipt each`, async () => {
  const db = await createEmptyDatabase();
  databases.push(db);
  await installRelease(db.url);
  await db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  const users = (await db.pool.query<{ id: string }>(
    "insert into chat_public.users (name) select 'rolling-' || n from generate_series(1, 4) n returning id")).rows.map((row) => row.id);

  const workers = [oldRelease(db, ["worker", "4"]), oldRelease(db, ["worker", "4"])];
  for (const worker of workers) await worker.waitFor("the old worker's runner", (line) => line.event === "ready");
  const api = oldRelease(db, ["api", "6", ...users]);
  const all = [...workers, api];

  // Barrier: the load is steady (turns finished) and requests are in flight (leases held) when the migration starts.
  await waitFor("20 turns finished by the old workers", async () => count(workers, "finished") >= 20);
  await waitFor("two leases held by the old workers", async () =>
    (await db.pool.query("select 1 from chat_private.chat_leases where expires_at > now()")).rowCount! >= 2);
  const started = performance.now();
  const migration = runChatd(["migrate"], db.url, 120_000, { CHATD_LOG_LEVEL: "debug" });
  // Observed, not waited on: how many of the old release's statements queued behind the migration's locks.
  let queued = 0;
  let done = false;
  void migration.finally(() => (done = true));
  while (!done) {
    const { rows } = await db.pool.query<{ n: number }>(`select count(distinct l.pid)::int as n from pg_locks l
      join pg_stat_activity a on a.pid = l.pid where not l.granted and a.application_name <> 'chatd migrate'`);
    queued = Math.max(queued, rows[0]!.n);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const migrated = await migration;
  const migrateMs = performance.now() - started;
  assert.is(migrated.code, 0, migrated.out);
  const retries = migrated.out.split("\n").filter((line) => line.includes("retrying"));
  console.log(`chatd migrate under load: ${Math.round(migrateMs)} ms, ${retries.length} retries, up to ${queued} old ` +
    `statements queued behind it\n${[...retries, migrated.out.trim().split("\n").at(-1)].join("\n")}`);
  assert.ok(queued >= 1, "the old release's statements met the migration's locks");

  // The old release goes on with this build's schema: more turns and requests, through the same statements.
  const finishedAtMigrate = count(workers, "finished");
  const createdAtMigrate = count([api], "created");
  await waitFor("20 more turns finished after the migration", async () => count(workers, "finished") >= finishedAtMigrate + 20, 30_000);
  await waitFor("20 more requests created after the migration", async () => count([api], "created") >= createdAtMigrate + 20, 30_000);

  // The deploy replaces the API, then (once every request is answered) the workers: each stops cleanly.
  api.child.kill("SIGTERM");
  assert.equal(await api.exited, { code: 0, signal: null }, "the old API stops cleanly");
  const created = count([api], "created");
  assert.equal(errors(all).map((line) => line.raw), [], "no error reached a client or a worker step");
  await waitFor("every request answered", async () => (await db.pool.query(
    "select 1 from chat_public.structured_output_requests where status = 'pending'")).rowCount === 0, 30_000);
  // Stopped once idle: a runner stopped while its local queue still holds wake-up jobs (a promoted turn's, which
  // find the lease taken) logged Graphile Worker's own shutdown errors ("Cannot background something when the
  // queue is already released"), which have nothing to do with the schema.
  await waitFor("the job queue drained", async () => (await db.pool.query("select 1 from graphile_worker.jobs")).rowCount === 0, 30_000);
  for (const worker of workers) worker.child.kill("SIGTERM");
  for (const worker of workers) assert.equal(await worker.exited, { code: 0, signal: null }, "an old worker stops cleanly");

  assert.equal(errors(all).map((line) => line.raw), [], "no error reached a client or a worker step");
  const { rows } = await db.pool.query<{ requests: number; succeeded: number; one_receipt: number; recoveries: number; leases: number }>(`
    select (select count(*)::int from chat_public.structured_output_requests) as requests,
           (select count(*)::int from chat_public.structured_output_requests where status = 'succeeded') as succeeded,
           (select count(*)::int from chat_public.structured_output_requests r
             where (select count(*) from chat_public.chat_messages m
                    where m.structured_output_request_id = r.id and m.kind = 'receipt') = 1) as one_receipt,
           (select coalesce(sum(recoveries), 0)::int from chat_private.turn_progress) as recoveries,
           (select count(*)::int from chat_private.chat_leases) as leases`);
  const turnMs = workers.flatMap((p) => p.lines.filter((line) => line.event === "finished").map((line) => Number(line.ms)))
    .sort((a, b) => a - b);
  console.log(`chats ${created} of 2 requests each (${createdAtMigrate} before the migration ended), turns ${turnMs.length}: ` +
    `p50 ${turnMs[Math.floor(turnMs.length / 2)]} ms, longest ${turnMs.at(-1)} ms (queued behind the migration)`);
  // Two requests per chat: the one that created it and the one sent after it.
  assert.equal(rows[0], { requests: 2 * created, succeeded: 2 * created, one_receipt: 2 * created, recoveries: 0, leases: 0 });
  const check = await runChatd(["migrate", "--check"], db.url);
  assert.is(check.code, 0, `this build's processes start on the migrated database:\n${check.out}`);
});

test("a client holding one table and then asking for another that the migration holds: no deadlock, for either", async () => {
  const db = await createEmptyDatabase();
  databases.push(db);
  await installRelease(db.url);
  // The cycle of a rolling deploy: the client reads chats (and keeps its transaction open), the migration queues for
  // chats while holding users, and the client then reads users. One of the two must give way; it must not be the
  // client, and the migration must not lose to a deadlock check either.
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("begin");
    await client.query("select 1 from chat_public.chats limit 1");
    const migration = runChatd(["migrate"], db.url, 120_000, { CHATD_LOG_LEVEL: "debug" });
    await waitFor("the migration queued for chats, holding users", async () => (await db.pool.query(
      `select 1 from pg_locks w join pg_locks h on h.pid = w.pid
       where w.relation = 'chat_public.chats'::regclass and not w.granted and w.mode = 'AccessExclusiveLock'
         and h.relation = 'chat_public.users'::regclass and h.granted and h.mode = 'AccessExclusiveLock'`)).rowCount === 1);
    await client.query("select 1 from chat_public.users limit 1");
    await client.query("commit");
    const migrated = await migration;
    assert.is(migrated.code, 0, migrated.out);
    assert.not.match(migrated.out, /deadlock/, "the migration gave way before any deadlock check");
  } finally {
    await client.end();
  }
});

test.run();
