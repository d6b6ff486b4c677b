// Shared pieces of the benchmarks: a fresh migrated database (DATABASE_URL's server, else an embedded one),
// a scratch folder, percentiles, and a table printer. Benchmarks print figures; they never assert on time.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ensureDatabase, projectRoot, withDatabase } from "../src/db/database.ts";
import { startEmbedded } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";

/** A new folder in the system's temp folder, removed when the benchmark's process exits (its workers' workspaces
 * and stats files: a run left them behind before). */
export function benchFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

/** A workspaces root with the `bench` workspace the benchmarks' turns list and read (a.txt, b.txt). */
export function benchWorkspaces(root: string): string {
  mkdirSync(join(root, "bench"), { recursive: true });
  writeFileSync(join(root, "bench", "a.txt"), "alpha\n");
  writeFileSync(join(root, "bench", "b.txt"), "beta\n");
  return root;
}

export interface BenchDatabase {
  url: string;
  /** The embedded server's postmaster, for its CPU (bench/server-cost.ts); undefined on a DATABASE_URL server. */
  postmasterPid?: number;
  close(): Promise<void>;
}

/** The bench cluster loads pg_stat_statements with tracking off: a profiling session turns it on for itself. */
const PROFILING_SETTINGS = ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=none",
  "pg_stat_statements.max=1000"];

export async function benchDatabase(label: string): Promise<BenchDatabase> {
  const dataDir = join(projectRoot, ".chatd", `bench-postgres-${label}`);
  const embedded = process.env.DATABASE_URL ? undefined
    : await startEmbedded({ dataDir, ephemeral: true, settings: PROFILING_SETTINGS });
  const admin = process.env.DATABASE_URL ?? embedded!.url;
  const name = `chatd_bench_${label}_${randomBytes(3).toString("hex")}`;
  await ensureDatabase(admin, name);
  const url = withDatabase(admin, name);
  await migrate(url);
  return {
    url,
    ...(embedded != null ? { postmasterPid: Number(readFileSync(join(dataDir, "cluster", "postmaster.pid"), "utf8").split("\n")[0]) } : {}),
    async close() {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      await client.end();
      await embedded?.stop();
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function printTable(rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)} | ${v}`);
}

/** Commits per second of a trivial INSERT on `connections` connections for `ms`: the physical ceiling. */
export async function commitRate(url: string, connections: number, ms: number): Promise<number> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query("create table if not exists bench_commit (id bigserial primary key, at timestamptz default now())");
  await setup.end();
  const clients = await Promise.all(Array.from({ length: connections }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }));
  let commits = 0;
  const deadline = Date.now() + ms;
  await Promise.all(clients.map(async (client) => {
    while (Date.now() < deadline) {
      await client.query("insert into bench_commit default values");
      commits += 1;
    }
  }));
  await Promise.all(clients.map((client) => client.end()));
  return commits / (ms / 1000);
}

/** Creates `count` plain chats for `user` in one transaction, each a one-step scripted turn whose step says `text`
 * after `delayMs` (bench:inflight, bench:leases). */
export async function createScriptedChats(pool: pg.Pool, user: string, count: number, delayMs: number, text: string): Promise<void> {
  const content = JSON.stringify([{ type: "text", text: JSON.stringify({ script: [{ text, delay_ms: delayMs }] }) }]);
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
    for (let i = 0; i < count; i += 1) await client.query("select chat_public.create_chat(content => $1, workspace => null)", [content]);
    await client.query("commit");
  } finally {
    client.release();
  }
}
