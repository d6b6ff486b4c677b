// `npm run bench:batch -- [items...] [--workers N] [--concurrency C] [--batch-concurrency B] [--no-baseline]`
// Drains batches of N items (default 1,000 and 10,000) through real `chatd worker` processes with the scripted
// provider (deterministic, zero model latency: this measures chatd, not a model) against a fresh database
// (DATABASE_URL's server, else an embedded PostgreSQL). Prints drain time, items/s, the workers' peak memory
// (VmHWM), and the chat tables' bytes per item. The baseline drains the same number of plain structured chats
// (create_chat, no batch) on the same workers: the batch target is >= 80 % of its turns/s.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { ensureDatabase, projectRoot, withDatabase } from "../src/db/database.ts";
import { startEmbedded, type EmbeddedServer } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "16" },
    "batch-concurrency": { type: "string", default: "64" },
    "no-baseline": { type: "boolean", default: false },
  },
});
const sizes = positionals.length > 0 ? positionals.map(Number) : [1000, 10_000];
const workers = Number(values.workers);
const workerConcurrency = Number(values.concurrency);
const batchConcurrency = Number(values["batch-concurrency"]);
const SCHEMA = '{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"]}}}';
const TABLES = ["chat_public.chats", "chat_public.chat_messages", "chat_public.structured_output_requests",
  "chat_public.chat_queued_messages", "chat_private.turn_progress", "chat_private.message_internals",
  "chat_private.idempotency_keys", "chat_private.chat_leases", "chat_public.batch_items", "chat_public.batches"];

let embedded: EmbeddedServer | undefined;
let adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  embedded = await startEmbedded({ dataDir: join(projectRoot, ".chatd", "bench-postgres"), ephemeral: true });
  adminUrl = embedded.url;
}

const peakKiB = (pid: number | undefined): number => {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
};

function startWorkers(url: string): ChildProcess[] {
  return Array.from({ length: workers }, () => spawn(process.execPath,
    [join(projectRoot, "src", "cli", "main.ts"), "worker", "--concurrency", String(workerConcurrency), "--metrics-port", "0"],
    { env: { ...process.env, DATABASE_URL: url, CHATD_LOG_LEVEL: "warn" }, stdio: ["ignore", "ignore", "inherit"] }));
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((child) => new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  })));
}

/** Resolves when `done()` holds, re-checked on every NOTIFY of `channel` (and once a second as a safety net). */
async function until(client: pg.Client, channel: string, done: () => Promise<boolean>): Promise<void> {
  await client.query(`listen ${pg.escapeIdentifier(channel)}`);
  let wake: () => void = () => {};
  const onNotify = () => wake();
  client.on("notification", onNotify);
  try {
    while (!(await done())) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
  } finally {
    client.off("notification", onNotify);
    await client.query(`unlisten ${pg.escapeIdentifier(channel)}`);
  }
}

async function run(n: number, mode: "batch" | "chats"): Promise<void> {
  const name = `chatd_bench_${process.pid}_${mode}_${n}`;
  await ensureDatabase(adminUrl!, name);
  const url = withDatabase(adminUrl!, name);
  await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  await client.query("update chat_private.settings set value = '60' where name = 'lease_seconds'");
  const { rows: [user] } = await client.query<{ id: string }>("insert into chat_public.users (name) values ('bench') returning id");
  const children = startWorkers(url);
  try {
    const started = performance.now();
    if (mode === "batch") {
      const items = JSON.stringify(Array.from({ length: n }, (_, i) => ({ line: i + 1, content: [{ type: "text", text: `question ${i + 1}` }] })));
      const { rows: [batch] } = await client.query<{ id: string }>(
        "select (chat_private.operator_create_batch($1, $2, $3, 'bench', 'scripted', null, $4)).id", [user!.id, SCHEMA, items, batchConcurrency]);
      await until(client, `chatd:batch:${batch!.id}`, async () =>
        (await client.query("select 1 from chat_public.batches where id = $1 and finished_at is not null", [batch!.id])).rows.length > 0);
    } else {
      await client.query(`select set_config('jwt.claims.sub', $1, false)`, [user!.id]);
      await client.query(`select chat_public.create_chat(jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'question ' || i)),
        $1, 'scripted') from generate_series(1, $2) i`, [SCHEMA, n]);
      // No per-chat channel fits thousands of chats; the chats are counted once a second.
      await until(client, "chatd:bench:none", async () =>
        (await client.query("select 1 from chat_public.structured_output_requests where status = 'pending' limit 1")).rows.length === 0);
    }
    const seconds = (performance.now() - started) / 1000;
    const peaks = children.map((c) => peakKiB(c.pid));
    const { rows: [size] } = await client.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(t::regclass))::bigint as bytes from unnest($1::text[]) t`, [TABLES]);
    const { rows: outcomes } = await client.query<{ status: string; n: number }>(
      "select status::text, count(*)::int as n from chat_public.structured_output_requests group by 1 order by 1");
    console.log(`${mode === "batch" ? "batch " : "chats "} n=${n}: drained in ${seconds.toFixed(2)} s, ` +
      `${(n / seconds).toFixed(1)} ${mode === "batch" ? "items" : "turns"}/s, worker peak RSS ${peaks.map((k) => `${(k / 1024).toFixed(0)} MiB`).join(" / ")}, ` +
      `${(Number(size!.bytes) / n).toFixed(0)} database bytes per item (${outcomes.map((o) => `${o.status} ${o.n}`).join(", ")})`);
  } finally {
    await stopWorkers(children);
    await client.end();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    await admin.end();
  }
}

console.log(`scripted provider (not a real model); ${workers} worker processes x concurrency ${workerConcurrency}, batch concurrency ${batchConcurrency}`);
try {
  for (const n of sizes) {
    if (!values["no-baseline"]) await run(n, "chats");
    await run(n, "batch");
  }
} finally {
  await embedded?.stop();
}
