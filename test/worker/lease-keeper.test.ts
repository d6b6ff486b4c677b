// The lease heartbeat of a worker process (worker/loop/lease-keeper.ts): one statement per beat renews the leases of
// all its runs, whatever their number. Runs in one process (the chat_run task body called directly, streams held at
// a barrier of the mock provider) show it on the real timer; the keeper's beats called directly, on real leases,
// show what each outcome of a beat does to the runs: a lost lease, an interrupt, a wedged run, a connection error,
// any other error, and a beat still in flight.
import pg from "pg";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { freePort } from "../../src/db/embedded.ts";
import { runChat } from "../../worker/chat-run.ts";
import { LeaseKeeper, type LeaseHolder } from "../../worker/loop/lease-keeper.ts";
import { acquire, createChat, createUser, expireLease, type Fence, interrupt } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { addModelConfig, createWorkerChat, makeDeps, makeWorkspaces, setSetting, testLogger, waitFor } from "../support/worker.ts";

let db: TestDatabase;
let server: MockProviderServer;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  // Beats every second; a lease has two beats of slack on a busy machine.
  await setSetting(db, "lease_seconds", 3);
  server = await startMockProvider();
  await addModelConfig(db, "chat", "openai-chat", server.url);
  user = await createUser(db, "keeper");
});
test.after(async () => {
  await server.close();
  await db.drop();
});

/** The chat ids each renewal statement sent through `pool` carried, in order, while `record` runs. */
async function renewals<T>(pool: pg.Pool, record: (seen: string[][]) => Promise<T>): Promise<T> {
  const seen: string[][] = [];
  const query = pool.query;
  pool.query = ((...args: unknown[]) => {
    const config = args[0] as string | { text: string; values?: unknown[] };
    const text = typeof config === "string" ? config : config.text;
    const values = (typeof config === "string" ? args[1] : config.values) as unknown[] | undefined;
    if (/renew_lease/.test(text)) seen.push([values?.[0]].flat() as string[]);
    return (query as (...a: unknown[]) => unknown).apply(pool, args);
  }) as typeof pool.query;
  try {
    return await record(seen);
  } finally {
    pool.query = query;
  }
}

test("eight runs in one worker process: every renewal statement renews all eight leases (one statement per beat)", async () => {
  const runs = 8;
  const deps = makeDeps(db, await makeWorkspaces(), "worker-keeper");
  const release = barrier();
  const reached = Array.from({ length: runs }, () => barrier());
  for (const hold of reached) server.enqueue({ text: ["held ", "step"], hold: { afterEvents: 2, release: release.promise, reached: hold.resolve } });
  const chats: string[] = [];
  for (let i = 0; i < runs; i += 1) chats.push(await createWorkerChat(db, user, `run ${i}`, { model: "chat", workspace: null }));
  try {
    const outcomes = await renewals(db.pool, async (seen) => {
      const running = chats.map((chat) => runChat(deps, chat));
      // Every run is streaming, so every run has been handed to the heartbeat.
      await Promise.all(reached.map((hold) => hold.promise));
      const from = seen.length;
      await waitFor("every lease renewed twice", async () =>
        chats.every((chat) => seen.slice(from).filter((ids) => ids.includes(chat)).length >= 2));
      const statements = seen.slice(from);
      release.resolve();
      assert.ok(statements.length >= 2);
      assert.equal(statements.map((ids) => [...ids].sort()), statements.map(() => [...chats].sort()),
        `each statement renews every run (chats per statement: ${statements.map((ids) => ids.length).join(", ")})`);
      return Promise.all(running);
    });
    assert.equal(outcomes, chats.map(() => ["finished"]), "the leases held throughout: every turn committed");
  } finally {
    await deps.close();
  }
});

interface Holder extends LeaseHolder {
  stops: string[];
}

function holder(fence: Fence, settings: Partial<LeaseHolder["settings"]> = {}, idleMs = 0, log = testLogger): Holder {
  const stops: string[] = [];
  return {
    chatId: fence.chatId, runnerId: fence.runnerId, settings: { leaseSeconds: 30, progressTimeoutMs: 60_000, ...settings },
    progress: { idleMs: () => idleMs }, log, stops, stop: (reason) => stops.push(reason), stopped: () => stops.length > 0,
  };
}

/** A logger whose warn lines land in `lines` (their messages). */
function capture(lines: string[]): LeaseHolder["log"] {
  return pino({ level: "warn" }, { write: (line: string) => lines.push((JSON.parse(line) as { msg: string }).msg) });
}

async function runningChats(n: number): Promise<Fence[]> {
  const fences: Fence[] = [];
  for (let i = 0; i < n; i += 1) fences.push(await acquire(db, (await createChat(db, user, `lease ${i}`)).chat_id));
  return fences;
}

/** Seconds from now until the lease expires (null: no lease row). */
async function remaining(chatId: string): Promise<number | null> {
  const { rows } = await db.pool.query<{ s: number }>(
    "select extract(epoch from expires_at - now())::float8 as s from chat_private.chat_leases where chat_id = $1", [chatId]);
  return rows[0]?.s ?? null;
}

test("1,024 leases, of two lengths, are renewed by one statement, each for its own length", async () => {
  // Lease rows have no foreign keys: 1,024 of them need no chats.
  const { rows } = await db.pool.query<{ chat_id: string; runner_id: string }>(
    `insert into chat_private.chat_leases (chat_id, runner_id, worker_id, expires_at)
     select gen_random_uuid(), gen_random_uuid(), 'keeper', now() + interval '1 second' from generate_series(1, 1024)
     returning chat_id, runner_id`);
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const holders = rows.map((row, i) => holder({ chatId: row.chat_id, runnerId: row.runner_id, historyVersion: "0", generationAttempt: "0" },
    { leaseSeconds: i % 2 === 0 ? 40 : 400 }));
  const unregister = holders.map((h) => keeper.register(h));
  try {
    const seen = await renewals(db.pool, async (calls) => {
      await keeper.beat();
      return calls;
    });
    assert.equal(seen.map((ids) => ids.length), [1024], "one statement");
    const { rows: [lengths] } = await db.pool.query<{ short: number; long: number }>(
      `select count(*) filter (where expires_at between now() + interval '35 s' and now() + interval '40 s')::int as short,
              count(*) filter (where expires_at between now() + interval '395 s' and now() + interval '400 s')::int as long
       from chat_private.chat_leases where chat_id = any($1)`, [rows.map((row) => row.chat_id)]);
    assert.equal(lengths, { short: 512, long: 512 });
    assert.equal(holders.flatMap((h) => h.stops), []);
  } finally {
    for (const stop of unregister) stop();
    await db.pool.query("delete from chat_private.chat_leases where worker_id = 'keeper'");
  }
});

test("the timer beats every third of the shortest lease among the runs", async () => {
  const [long, short] = await runningChats(2);
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const holders = [holder(long!, { leaseSeconds: 300 }), holder(short!, { leaseSeconds: 1 })];
  // Alone, the five-minute lease would beat in 100 s; with a one-second lease beside it, in a third of a second.
  const unregister = holders.map((h) => keeper.register(h));
  try {
    await waitFor("a beat renewing both leases, each for its own length", async () =>
      (await remaining(long!.chatId))! > 200 && (await remaining(short!.chatId))! <= 1, 10_000);
  } finally {
    for (const stop of unregister) stop();
  }
});

test("the beat follows the runs that remain: one of two one-second leases ends, a holder is replaced", async () => {
  const [ended, kept, replaced] = await runningChats(3);
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const stopEnded = keeper.register(holder(ended!, { leaseSeconds: 1 }));
  const stopKept = keeper.register(holder(kept!, { leaseSeconds: 1 }));
  // A new holder of the same runner id replaces the old one, whose function then removes nothing.
  const stopStale = keeper.register(holder(replaced!, { leaseSeconds: 1 }));
  const stopReplaced = keeper.register(holder(replaced!, { leaseSeconds: 300 }));
  stopEnded();
  stopStale();
  try {
    // Still a third of a second (kept's lease), not the hundred seconds of the replacing holder's lease alone.
    await waitFor("a beat renewing the remaining leases, each for its own length", async () =>
      (await remaining(kept!.chatId))! <= 1 && (await remaining(replaced!.chatId))! > 200, 10_000);
  } finally {
    stopKept();
    stopReplaced();
  }
});

test("a run whose lease another runner took, or whose lease row is gone, is stopped lost; the others go on renewed", async () => {
  const [taken, released, kept] = await runningChats(3);
  const holders = [holder(taken!), holder(released!), holder(kept!)];
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const unregister = holders.map((h) => keeper.register(h));
  try {
    await expireLease(db, taken!.chatId);
    await acquire(db, taken!.chatId, "other-worker");
    await db.pool.query("delete from chat_private.chat_leases where chat_id = $1", [released!.chatId]);
    await expireLease(db, kept!.chatId);
    await keeper.beat();
    assert.equal(holders.map((h) => h.stops), [["lost"], ["lost"], []]);
    assert.ok((await remaining(kept!.chatId))! > 20, "the run that holds its lease was renewed");
  } finally {
    for (const stop of unregister) stop();
  }
});

test("an interrupting chat is seen by the beat (a missed notification), the other run goes on", async () => {
  const [quiet, interrupted] = await runningChats(2);
  const holders = [holder(quiet!), holder(interrupted!)];
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const unregister = holders.map((h) => keeper.register(h));
  try {
    await interrupt(db, user, interrupted!.chatId);
    await keeper.beat();
    assert.equal(holders.map((h) => h.stops), [[], ["interrupt"]]);
  } finally {
    for (const stop of unregister) stop();
  }
});

test("a run past its progress timeout is left out of the statement and stopped lost, with one warning", async () => {
  const [wedged, busy] = await runningChats(2);
  const lines: string[] = [];
  const holders = [holder(wedged!, { progressTimeoutMs: 1000 }, 1001, capture(lines)), holder(busy!, { progressTimeoutMs: 1000 }, 1000)];
  const keeper = new LeaseKeeper(db.pool, testLogger);
  const unregister = holders.map((h) => keeper.register(h));
  try {
    await expireLease(db, wedged!.chatId);
    const seen = await renewals(db.pool, async (calls) => {
      await keeper.beat();
      await keeper.beat();
      return calls;
    });
    assert.equal(seen, [[busy!.chatId], [busy!.chatId]], "only the progressing run is renewed");
    assert.equal(holders.map((h) => h.stops), [["lost", "lost"], []]);
    assert.ok((await remaining(wedged!.chatId))! < 0, "the wedged run's lease is left to expire");
    assert.equal(lines, ["the run made no progress within progress_timeout_seconds; its lease is left to expire"]);
  } finally {
    for (const stop of unregister) stop();
  }
});

test("a beat whose statement fails on its connection stops nothing; the next beat renews", async () => {
  const [first, second] = await runningChats(2);
  const dead = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/chatd` });
  let calls = 0;
  const pool = { query: (...args: unknown[]) => ((calls++ === 0 ? dead : db.pool).query as (...a: unknown[]) => unknown)(...args) };
  const lines: string[] = [];
  const keeper = new LeaseKeeper(pool as unknown as pg.Pool, capture(lines));
  const holders = [holder(first!), holder(second!)];
  const unregister = holders.map((h) => keeper.register(h));
  try {
    for (const fence of [first!, second!]) await expireLease(db, fence.chatId);
    await keeper.beat();
    assert.equal(holders.map((h) => h.stops), [[], []], "nothing stopped");
    assert.equal(lines, [], "nothing logged by the keeper (the pool logs the outage)");
    assert.ok((await remaining(first!.chatId))! < 0);
    await keeper.beat();
    assert.is(calls, 2);
    assert.ok((await remaining(first!.chatId))! > 20 && (await remaining(second!.chatId))! > 20, "renewed at the next beat");
  } finally {
    for (const stop of unregister) stop();
    await dead.end();
  }
});

test("any other error of the statement is logged once and stops its runs lost", async () => {
  const [first, second] = await runningChats(2);
  // chat_user may not execute renew_leases: a refusal (42501), not a connection error.
  const refused = new pg.Pool({ connectionString: db.url, options: "-c role=chat_user" });
  const lines: string[] = [];
  const keeper = new LeaseKeeper(refused, capture(lines));
  const holders = [holder(first!), holder(second!)];
  const unregister = holders.map((h) => keeper.register(h));
  try {
    await keeper.beat();
    assert.equal(holders.map((h) => h.stops), [["lost"], ["lost"]]);
    assert.equal(lines, ["lease renewal failed; abandoning the steps of the runs it renews"]);
  } finally {
    for (const stop of unregister) stop();
    await refused.end();
  }
});

test("one beat at a time: a beat while the last one's statement is in flight sends nothing; a run that ended is not stopped", async () => {
  const [ended, held] = await runningChats(2);
  const gate = barrier();
  const sent = barrier();
  let calls = 0;
  const pool = {
    query: async (...args: unknown[]) => {
      calls += 1;
      sent.resolve();
      await gate.promise;
      return (db.pool.query as (...a: unknown[]) => unknown)(...args);
    },
  };
  const keeper = new LeaseKeeper(pool as unknown as pg.Pool, testLogger);
  const holders = [holder(ended!), holder(held!)];
  const [unregisterEnded, unregisterHeld] = holders.map((h) => keeper.register(h));
  try {
    await db.pool.query("delete from chat_private.chat_leases where chat_id = any($1)", [[ended!.chatId, held!.chatId]]);
    const first = keeper.beat();
    await sent.promise;
    await keeper.beat();
    assert.is(calls, 1, "the second beat sent nothing");
    unregisterEnded!();
    gate.resolve();
    await first;
    assert.equal(holders.map((h) => h.stops), [[], ["lost"]], "only the run still registered hears of its lost lease");
  } finally {
    unregisterHeld!();
  }
});

test.run();
