// `npm run bench:soak -- [turns] [rounds]`: many structured turns through the real worker process (scripted
// provider, the bench:e2e turn: a tool call, its result, a valid finalization, the receipt), in rounds, with
// retention after each. Each chat is created with an idempotency key (as @chatd/client sends on every write)
// and each receipt makes a webhook delivery to a local receiver (answering 204), so the transient rules have rows.
// Each round "a day passes" first: every chat, key, delivery and deleted-request id is back-dated by a day (and a
// minute). The idle-chat rule is 2 days and the others 1, so after a round retention deletes the keys and deliveries
// of the round before (by their own rules) and the chats of the round before that (with what names them, including
// their deleted-request ids a day later). After the round's turns and deliveries the data_retention task's loop runs
// (worker/retention.ts runRetention), then a plain VACUUM of the tables stands in for autovacuum. Prints each
// table's bytes (heap + indexes + TOAST) per turn after the first round, then empty, after the first round, and at
// the end of every round, and the live rows at the end: flat from the second round on means storage stays bounded
// once retention runs. Defaults: 100,000 turns in 10 rounds.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../src/db/database.ts";
import { runRetention } from "../worker/retention.ts";
import { benchDatabase, benchFolder, benchWorkspaces, printTable } from "./support.ts";

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
  "chat_private.webhook_deliveries", "chat_private.webhook_attempts", "graphile_worker._private_jobs"];

async function sizes(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ t: string; bytes: string }>(
    "select t, pg_total_relation_size(t::regclass)::bigint as bytes from unnest($1::text[]) t", [TABLES]);
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.bytes)]));
}

/** Live rows per table (what a finished turn leaves behind, once divided by the turns that exist). */
async function rowCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of TABLES) counts[t] = (await pool.query<{ n: number }>(`select count(*)::int as n from ${t}`)).rows[0]!.n;
  return counts;
}

async function createChats(pool: pg.Pool, user: string, count: number, round: number): Promise<void> {
  const lanes = Math.min(4, count);
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    const client = await pool.connect();
    try {
      for (let i = lane; i < count; i += lanes) {
        await client.query("begin");
        await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
        await client.query(`select chat_id from chat_public.create_chat(content => $1, response_format => $2, workspace => 'bench',
          idempotency_key => $3)`, [CONTENT, FORMAT, `soak-${round}-${i}`]);
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
    const { rows } = await pool.query<{ n: number }>(`select ((select count(*) from chat_public.chats where status <> 'waiting')
      + (select count(*) from chat_private.webhook_deliveries where status = 'pending'))::int as n`);
    if (rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** "A day passes" for every chat, deleted-request id, idempotency key and webhook delivery (the touch trigger would reset updated_at: triggers off here). */
async function age(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query("set local session_replication_role = replica");
    for (const [table, column] of [["chat_public.chats", "updated_at"], ["chat_private.deleted_requests", "deleted_at"],
      ["chat_private.idempotency_keys", "created_at"], ["chat_private.webhook_deliveries", "created_at"]]) {
      await client.query(`update ${table} set ${column} = ${column} - interval '1 day 1 minute'`);
    }
    await client.query("commit");
  } finally {
    client.release();
  }
}

/**
 * The rules on (idle chats 2 days, the rest 1) only while the bench runs retention: the worker's own data_retention
 * job (every 10 minutes) then finds nothing due, so each round's figures are this loop's alone.
 */
async function rules(pool: pg.Pool, on: boolean): Promise<void> {
  await pool.query(`update chat_private.settings set value = case when not $1 then '0'::jsonb when name = 'retention_idle_chat_days' then '2' else '1' end
    where name in ('retention_idle_chat_days', 'deleted_request_days', 'idempotency_key_days', 'webhook_delivery_days')`, [on]);
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

const workspaces = benchWorkspaces(benchFolder("chatd-soak-"));
const receiver = createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
const db = await benchDatabase("soak");
const pool = new pg.Pool({ connectionString: db.url, max: 6 });
pool.on("error", (error) => console.error(`bench:soak: idle connection failed: ${error.message}`));
let worker: ChildProcess | undefined;
try {
  await pool.query("update chat_private.experiments set enabled = true");
  await pool.query("update chat_private.settings set value = '500' where name = 'retention_batch_size'");
  await rules(pool, false);
  const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('soak') returning id")).rows[0]!.id;
  await pool.query("select chat_private.webhook_add($1, $2, null, $3)", [user, receiverUrl, `whsec_${randomBytes(32).toString("base64")}`]);
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
    await createChats(pool, user, PER_ROUND, round);
    await waitForTurns(pool, worker);
    turns += PER_ROUND;
    if (round === 1) columns.push({ label: "round 1", sizes: await sizes(pool) });
    const retentionStart = Date.now();
    await rules(pool, true);
    const deleted = await runRetention(pool, 1_000_000);
    await rules(pool, false);
    const retentionMs = Date.now() - retentionStart;
    await pool.query(`vacuum ${TABLES.join(", ")}`);
    const after = await sizes(pool);
    columns.push({ label: `r${round}+ret`, sizes: after });
    const total = Object.values(after).reduce((a, b) => a + b, 0);
    console.log(`round ${round}: ${PER_ROUND} turns in ${((retentionStart - roundStart) / 1000).toFixed(1)} s, retention deleted ` +
      `${deleted.chats} chats, ${deleted.idempotency_keys} keys, ${deleted.webhook_deliveries} deliveries in ` +
      `${(retentionMs / 1000).toFixed(1)} s (load ${loadavg().map((l) => l.toFixed(1)).join(" ")}); tables ${kib(total)} (` +
      `${TABLES.map((t) => `${t.split(".")[1]} ${kib(after[t] ?? 0)}`).join(", ")})`);
  }
  const first = columns[1]!.sizes;
  console.log(`\n${turns} turns in ${((Date.now() - started) / 1000).toFixed(0)} s (${ROUNDS} rounds); retention keeps the last two rounds' chats`);
  printTable([["table", "bytes/turn (round 1) | sizes: empty, after round 1 (before any retention), then after each round's retention"],
    ...TABLES.map((t): [string, string] => [t, `${(((first[t] ?? 0) - (columns[0]!.sizes[t] ?? 0)) / PER_ROUND).toFixed(0)} | ` +
      columns.map((c) => kib(c.sizes[t] ?? 0)).join(", ")])]);
  const rows = await rowCounts(pool);
  console.log(`\nlive rows at the end (the last two rounds' chats, ${PER_ROUND} each, are kept): ` +
    TABLES.map((t) => `${t} ${rows[t]}`).join(", "));
} finally {
  if (worker != null && worker.exitCode == null && worker.signalCode == null) {
    const exited = new Promise((resolve) => worker!.on("exit", resolve));
    worker.kill("SIGTERM");
    await exited;
  }
  await pool.end();
  await db.close();
  receiver.close();
}
