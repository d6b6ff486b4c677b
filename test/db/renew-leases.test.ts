// renew_leases: a worker process's lease heartbeat, every lease of its runs in one statement (sql/070). Each lease
// is renewed with its own length, or reported lost, or skipped while another transaction holds its row; the chat's
// status rides along. Concurrency uses a held row lock as the barrier, never a sleep.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { TestDatabase } from "../support/db.ts";
import { acquire, chatDatabase, chatRow, Connections, createChat, expireLease, type Fence, interrupt } from "../support/chats.ts";

let db: TestDatabase;
let user: string;
const connections = new Connections();

test.before(async () => {
  ({ db, user } = await chatDatabase("keeper"));
});
test.after(async () => {
  await connections.endAll();
  await db.drop();
});

interface Renewal {
  runner_id: string;
  renewed: boolean | null;
  status: string | null;
}

async function renewLeases(fences: Fence[], lengths: (number | null)[] = fences.map(() => 30)): Promise<Renewal[]> {
  const { rows } = await db.pool.query<Renewal>("select * from chat_private.renew_leases($1, $2, $3)",
    [fences.map((f) => f.chatId), fences.map((f) => f.runnerId), lengths]);
  return rows.sort((a, b) => fences.findIndex((f) => f.runnerId === a.runner_id) - fences.findIndex((f) => f.runnerId === b.runner_id));
}

/** Seconds from now until the chat's lease expires (null: no lease row). */
async function remaining(chatId: string): Promise<number | null> {
  const { rows } = await db.pool.query<{ s: number }>(
    "select extract(epoch from expires_at - now())::float8 as s from chat_private.chat_leases where chat_id = $1", [chatId]);
  return rows[0]?.s ?? null;
}

async function runningChats(n: number): Promise<Fence[]> {
  const fences: Fence[] = [];
  for (let i = 0; i < n; i += 1) fences.push(await acquire(db, (await createChat(db, user, `run ${i}`)).chat_id));
  return fences;
}

test("renew_leases renews each held lease with its own length and returns its chat's status; it is not a transition", async () => {
  const fences = await runningChats(3);
  for (const fence of fences) await expireLease(db, fence.chatId);
  const before = await chatRow(db, fences[0]!.chatId);
  const { rows: setting } = await db.pool.query<{ n: number }>("select chat_private.setting_int('lease_seconds') as n");
  assert.equal(await renewLeases(fences, [60, 120, null]), fences.map((f) => ({ runner_id: f.runnerId, renewed: true, status: "running" })));
  const lengths = [60, 120, setting[0]!.n];
  for (const [i, fence] of fences.entries()) {
    const left = (await remaining(fence.chatId))!;
    assert.ok(left > lengths[i]! - 5 && left <= lengths[i]!, `lease ${i}: ${left} s left, renewed for ${lengths[i]}`);
  }
  assert.is((await chatRow(db, fences[0]!.chatId)).snapshot_version, before.snapshot_version, "a heartbeat bumps no version");
});

test("a lease another runner took or one that was released is reported lost (false) and left alone; the others are renewed", async () => {
  const [taken, released, kept] = await runningChats(3);
  await expireLease(db, taken!.chatId);
  const successor = await acquire(db, taken!.chatId, "other-worker");
  await db.pool.query("select chat_private.release_lease($1, $2)", [released!.chatId, released!.runnerId]);
  await expireLease(db, kept!.chatId);
  const { rows: [held] } = await db.pool.query<{ expires_at: Date }>(
    "select expires_at from chat_private.chat_leases where chat_id = $1", [taken!.chatId]);
  assert.equal((await renewLeases([taken!, released!, kept!])).map((r) => r.renewed), [false, false, true]);
  const { rows: [after] } = await db.pool.query<{ runner_id: string; expires_at: Date }>(
    "select runner_id, expires_at from chat_private.chat_leases where chat_id = $1", [taken!.chatId]);
  assert.equal(after, { runner_id: successor.runnerId, expires_at: held!.expires_at }, "the successor's lease is untouched");
  assert.is(await remaining(released!.chatId), null, "a released lease is not brought back");
  assert.ok((await remaining(kept!.chatId))! > 0);
});

test("an interrupting chat's status comes with its renewal", async () => {
  const [quiet, interrupted] = await runningChats(2);
  await interrupt(db, user, interrupted!.chatId);
  assert.equal((await renewLeases([quiet!, interrupted!])).map((r) => [r.renewed, r.status]), [[true, "running"], [true, "interrupting"]]);
});

test("a lease row another transaction holds is skipped (null) without waiting; the others are renewed, and it is next time", async () => {
  const [busy, free] = await runningChats(2);
  await expireLease(db, free!.chatId);
  const other = await connections.open(db);
  await other.client.query("begin");
  await other.client.query("select 1 from chat_private.chat_leases where chat_id = $1 for update", [busy!.chatId]);
  try {
    assert.equal((await renewLeases([busy!, free!])).map((r) => r.renewed), [null, true]);
    assert.ok((await remaining(free!.chatId))! > 0);
  } finally {
    await other.client.query("commit");
  }
  assert.equal((await renewLeases([busy!, free!])).map((r) => r.renewed), [true, true]);
});

test("arrays that do not pair up are refused with CIINV, naming the argument", async () => {
  const [fence] = await runningChats(1);
  const call = (runners: string[], lengths: number[]) =>
    db.pool.query("select * from chat_private.renew_leases($1, $2, $3)", [[fence!.chatId], runners, lengths]);
  for (const [runners, lengths, column] of [[[], [30], "runner_ids"], [[fence!.runnerId], [30, 30], "lease_seconds"]] as const) {
    const error = await call([...runners], [...lengths]).then(() => null, (e: unknown) => e as { code?: string; column?: string });
    assert.equal([error?.code, error?.column], ["CIINV", column]);
  }
  assert.equal(await renewLeases([]), [], "no leases: nothing to renew");
  assert.equal((await call([fence!.runnerId], [30])).rows.map((r: Renewal) => r.renewed), [true], "paired, it renews");
});

test.run();
