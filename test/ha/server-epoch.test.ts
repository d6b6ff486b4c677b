// The lease sweep's grace after a new server epoch (sql/070 chat_private._server_epoch): a failover (a promoted
// replica: new timeline, same postmaster start as ever) must count no recovery for leases that ran out while the
// database was away, while a worker known dead before the failover is still recovered as soon as its lease
// expires. The new epoch is made here by rewriting the recorded one (what the sweep sees after a promotion: the
// recorded epoch is not the server's); time passes by back-dating, never by sleeping.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, count, createChat, createUser, expireLease } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "epoch");
  await db.pool.query("update chat_private.settings set value = '3' where name = 'lease_seconds'");
});
test.after(async () => {
  await db.drop();
});

const sweep = async () => (await db.pool.query<{ n: number }>("select chat_private.sweep_expired_leases() as n")).rows[0]!.n;
const recoveries = async (chatId: string) => (await db.pool.query<{ n: number }>(
  "select recoveries as n from chat_private.turn_progress where chat_id = $1 and finished_at is null", [chatId])).rows[0]!.n;
const leased = (chatId: string) => count(db, "select 1 from chat_private.chat_leases where chat_id = $1", [chatId]);

/** A worker reports alive (as worker/index.ts does every second), `agoSeconds` ago, valid for 4 s. */
async function reported(worker: string, agoSeconds: number): Promise<void> {
  await db.pool.query("select chat_private.report_worker_alive($1, $1, 4)", [worker]);
  await db.pool.query(`update chat_private.worker_processes set seen_at = now() - make_interval(secs => $2),
    expires_at = now() - make_interval(secs => $2) + interval '4 seconds' where queue_id = $1`, [worker, agoSeconds]);
}

/** The database fails over: the recorded epoch is no longer the server's (a promotion changes the timeline). */
async function failover(): Promise<void> {
  await db.pool.query("update chat_private.server_epoch set epoch = 'the old primary'");
}

test("the epoch is recorded once: the system identifier, the WAL timeline and the postmaster start", async () => {
  await sweep();
  const { rows } = await db.pool.query<{ epoch: string; start: string }>(
    "select epoch, pg_postmaster_start_time()::text as start from chat_private.server_epoch");
  assert.is(rows.length, 1);
  assert.match(rows[0]!.epoch, /^\d+\/[0-9A-F]{8}\//);
  assert.ok(rows[0]!.epoch.endsWith(`/${rows[0]!.start}`), rows[0]!.epoch);
  await sweep();
  assert.is(await count(db, "select 1 from chat_private.server_epoch"), 1);
});

test("after a failover, a lease that ran out during it is not taken for a lease length: no recovery", async () => {
  const chat = await createChat(db, user, "through the failover");
  await reported("alive-worker", 40);
  await acquire(db, chat.chat_id, "alive-worker");
  await expireLease(db, chat.chat_id);
  // The outage outlasted the lease (40 s > 3 s): the worker could neither renew its lease nor report.
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '30 seconds' where chat_id = $1", [chat.chat_id]);
  await failover();
  await sweep();
  assert.is(await leased(chat.chat_id), 1, "the lease is left to its runner, which renews it on reconnecting");
  assert.is(await recoveries(chat.chat_id), 0);
  // A lease length after the new epoch was seen, a runner that never came back is recovered (and counted).
  await db.pool.query("update chat_private.server_epoch set observed_at = now() - interval '4 seconds'");
  await sweep();
  assert.is(await leased(chat.chat_id), 0);
  assert.is(await recoveries(chat.chat_id), 1);
});

test("after a failover, a worker known dead before it (its reports lapsed while another reported) is recovered at once", async () => {
  const dead = await createChat(db, user, "dead before the failover");
  const alive = await createChat(db, user, "alive through the failover");
  await reported("dead-worker", 60);
  await acquire(db, dead.chat_id, "dead-worker");
  await reported("live-worker", 20);
  await acquire(db, alive.chat_id, "live-worker");
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '10 seconds' where chat_id = any($1)",
    [[dead.chat_id, alive.chat_id]]);
  await failover();
  // The first report of the new epoch (the live worker's) records the epoch before its own report.
  await db.pool.query("select chat_private.report_worker_alive('live-worker', 'live-worker', 4)");
  await sweep();
  assert.is(await leased(dead.chat_id), 0, "the dead worker's lease is taken");
  assert.is(await recoveries(dead.chat_id), 1);
  assert.is(await leased(alive.chat_id), 1, "the live worker's lease waits for it");
  assert.is(await recoveries(alive.chat_id), 0);
});

test.run();
