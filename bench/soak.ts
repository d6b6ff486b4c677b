// `npm run bench:soak -- [turns] [rounds]`: many structured turns through the real worker process (scripted
// provider, the bench:e2e turn: a tool call, its result, a valid finalization, the receipt), in rounds, with the
// idle-chat retention rule on. Each round "a day passes" first: the previous round's chats are back-dated past the
// rule; after the round's turns the data_retention task's loop runs (worker/retention.ts runRetention), then a plain VACUUM of the chat
// tables stands in for autovacuum. Prints each table's bytes (heap + indexes + TOAST) per turn after the first
// round, then empty, after the first round, and at the end of every round: flat from the second round on means
// storage stays bounded once retention runs. Defaults: 100,000 turns in 10 rounds.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { runRetention } from "../worker/retention.ts";
import { benchDatabase, printTable } from "./support.ts";

const TURNS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 10);
const PER_ROUND = Math.ceil(TURNS / ROUNDS);
const SCHEMA = { type: "object", properties: { files: { type: "integer" } }, required: ["files"], additionalProperties: false };
const CONTENT = JSON.stringify([{ type: "text", text: JSON.stringify({ script: [
  { tool_calls: [{ name: "list_files", args: { path: "." } }] },
  { tool_calls: [{ name: "coder_structured_output", args: { output: { files: 2 } } }] },
] }) }]);
const FORMAT = JSON.stringify({ type: "json_schema", json_schema: { name: "listing", schema: SCHEMA } });
const TABLES = ["chat_public.chats", "chat_public.chat_messages", "chat_private.message_internals",
  "chat_public.structured_output_requests", "chat_public.chat_queued_messages", "chat_private.turn_progress",
  "chat_private.chat_leases", "chat_private.idempotency_keys", "chat_private.deleted_requests",
  "graphile_worker._private_jobs"];

async function sizes(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ t: string; bytes: string }>(
    "select t, pg_total_relation_size(t::regclass)::bigint as bytes from unnest($1::text[]) t", [TABLES]);
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.bytes)]));
}

async function createChats(pool: pg.Pool, user: string, count: number): Promise<void> {
  const lanes = Math.min(4, count);
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    const client = await pool.connect();
    try {
      for (let i = lane; i < count; i += lanes) {
        await client.query("begin");
        await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
        await client.query("select chat_id from chat_public.create_chat(content => $1, response_format => $2, workspace => 'bench')",
          [CONTENT, FORMAT]);
        await client.query("commit");
      }
    } finally {
      client.release();
    }
  }));
}

async function waitForTurns(pool: pg.Pool, worker: ChildProcess): Promise<void> {
  for (;;) {
    if (worker.exitCode != null || worker.signalCode != null) throw new Error(`the worker exited (${worker.exitCode ?? worker.signalCode})`);
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from chat_public.chats where status <> 'waiting'");
    if (rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** "A day passes" for every chat that exists now (the previous round's) and every deleted-request id (the touch trigger would reset updated_at: triggers off here). */
async function age(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query("set local session_replication_role = replica");
    await client.query("update chat_public.chats set updated_at = now() - interval '2 days' where updated_at > now() - interval '1 day'");
    await client.query("update chat_private.deleted_requests set deleted_at = now() - interval '2 days' where deleted_at > now() - interval '1 day'");
    await client.query("commit");
  } finally {
    client.release();
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

const workspaces = join(tmpdir(), `chatd-soak-${process.pid}`);
mkdirSync(join(workspaces, "bench"), { recursive: true });
writeFileSync(join(workspaces, "bench", "a.txt"), "alpha\n");
writeFileSync(join(workspaces, "bench", "b.txt"), "beta\n");
const db = await benchDatabase("soak");
const pool = new pg.Pool({ connectionString: db.url, max: 6 });
pool.on("error", (error) => console.error(`bench:soak: idle connection failed: ${error.message}`));
let worker: ChildProcess | undefined;
try {
  await pool.query("update chat_private.experiments set enabled = true");
  await pool.query("update chat_private.settings set value = '1' where name = 'retention_idle_chat_days'");
  await pool.query("update chat_private.settings set value = '500' where name = 'retention_batch_size'");
  await pool.query("update chat_private.settings set value = '1' where name = 'deleted_request_days'");
  const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('soak') returning id")).rows[0]!.id;
  worker = spawn(process.execPath, [join(projectRoot, "bench", "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: db.url, CHATD_WORKSPACES_ROOT: workspaces, CHATD_BENCH_CONCURRENCY: "8" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const columns: { label: string; sizes: Record<string, number> }[] = [{ label: "empty", sizes: await sizes(pool) }];
  const started = Date.now();
  let turns = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const roundStart = Date.now();
    await age(pool);
    await createChats(pool, user, PER_ROUND);
    await waitForTurns(pool, worker);
    turns += PER_ROUND;
    if (round === 1) columns.push({ label: "round 1", sizes: await sizes(pool) });
    const retentionStart = Date.now();
    const deleted = await runRetention(pool, 1_000_000);
    const retentionMs = Date.now() - retentionStart;
    await pool.query(`vacuum ${TABLES.join(", ")}`);
    const after = await sizes(pool);
    columns.push({ label: `r${round}+ret`, sizes: after });
    const total = Object.values(after).reduce((a, b) => a + b, 0);
    console.log(`round ${round}: ${PER_ROUND} turns in ${((retentionStart - roundStart) / 1000).toFixed(1)} s, retention deleted ` +
      `${deleted.chats} chats in ${(retentionMs / 1000).toFixed(1)} s; chat tables ${kib(total)} (` +
      `${TABLES.map((t) => `${t.split(".")[1]} ${kib(after[t] ?? 0)}`).join(", ")})`);
  }
  const first = columns[1]!.sizes;
  console.log(`\n${turns} turns in ${((Date.now() - started) / 1000).toFixed(0)} s (${ROUNDS} rounds); retention keeps the last round`);
  printTable([["table", "bytes/turn (round 1) | sizes: empty, after round 1 (before any retention), then after each round's retention"],
    ...TABLES.map((t): [string, string] => [t, `${(((first[t] ?? 0) - (columns[0]!.sizes[t] ?? 0)) / PER_ROUND).toFixed(0)} | ` +
      columns.map((c) => kib(c.sizes[t] ?? 0)).join(", ")])]);
} finally {
  if (worker != null && worker.exitCode == null && worker.signalCode == null) {
    const exited = new Promise((resolve) => worker!.on("exit", resolve));
    worker.kill("SIGTERM");
    await exited;
  }
  await pool.end();
  await db.close();
}
