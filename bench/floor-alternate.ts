// `npm run bench:floor-alternate -- <baseline checkout> [rounds] [turns per round] [clients]`: PostgreSQL's CPU per
// structured turn for this tree against a baseline checkout, measured where the noise of a shared machine hurts
// least. One embedded cluster holds two databases, each migrated by its own checkout; each checkout's worker runs a
// few turns on its database so that its statements are captured (bench/worker-process.ts), then the SQL floor of
// each (bench/sql-floor.ts: the client's create_chat and the worker's statements replayed by pgbench, no worker) runs
// alternately, round after round, on the same server. The figure is the server's CPU time (/proc:
// bench/server-cost.ts), not wall time, per turn; each round's pair ran back to back under the same load, so the
// ratio of the medians is what to read. Timings are printed, never asserted.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { ensureDatabase, projectRoot, withDatabase } from "../src/db/database.ts";
import { startEmbedded } from "../src/db/embedded.ts";
import { backendsGone, profileRows, serverCpuMs, startProfiling } from "./server-cost.ts";
import { floorScript, type CapturedStatement } from "./sql-floor.ts";
import { CLIENT_TURN, createStructuredChats, waitForReceipts } from "./structured-turn.ts";
import { benchFolder, benchWorkspaces, percentile, printTable } from "./support.ts";

const [baseline, rounds = "6", turns = "200", clients = "1"] = process.argv.slice(2);
// CHATD_BENCH_PROFILE=n: the counting run also lists its top n statements, functions and sequential scans and row writes per turn.
const profileLimit = Number(process.env.CHATD_BENCH_PROFILE ?? 0);
if (baseline == null || !existsSync(join(baseline, "src", "db", "migrate.ts"))) {
  console.error("usage: npm run bench:floor-alternate -- <baseline checkout> [rounds] [turns per round] [clients]");
  process.exit(2);
}

interface Side {
  label: string;
  name: string;
  dir: string;
  url: string;
  user: string;
  script: string;
  variables: Record<string, string>;
  cpuMs: number[];
}

const dataDir = join(projectRoot, ".chatd", "bench-postgres-floor-alternate");
// pg_stat_statements is loaded with tracking off; only the counting run after the measured rounds turns it on.
const server = await startEmbedded({ dataDir, ephemeral: true,
  settings: ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=none", "pg_stat_statements.max=1000"] });
const postmasterPid = Number(readFileSync(join(dataDir, "cluster", "postmaster.pid"), "utf8").split("\n")[0]);
const workspaces = benchWorkspaces(benchFolder("chatd-floor-alternate-"));

/** A database migrated by `dir`'s own migrate, with a few turns run by `dir`'s own worker to capture its statements. */
async function prepare(label: string, dir: string, name: string): Promise<Side> {
  await ensureDatabase(server.url, name);
  const url = withDatabase(server.url, name);
  const migrated = spawnSync(process.execPath, ["--input-type=module", "-e",
    `const { migrate } = await import(${JSON.stringify(join(dir, "src", "db", "migrate.ts"))}); await migrate(process.env.BENCH_URL);`],
  { cwd: dir, env: { ...process.env, BENCH_URL: url }, encoding: "utf8" });
  if (migrated.status !== 0) throw new Error(`${label}: migrate failed: ${migrated.stderr}`);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await pool.query("update chat_private.experiments set enabled = true");
    const user = (await pool.query<{ id: string }>("insert into chat_public.users (name) values ('bench') returning id")).rows[0]!.id;
    const statsFile = join(workspaces, `${name}.json`);
    const worker = spawn(process.execPath, [join(dir, "bench", "worker-process.ts")], {
      cwd: dir, stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DATABASE_URL: url, CHATD_WORKSPACES_ROOT: workspaces, CHATD_BENCH_CONCURRENCY: "4",
        CHATD_BENCH_STATS_FILE: statsFile },
    });
    const exited = new Promise((done) => worker.on("exit", done));
    await createStructuredChats(pool, user, 4);
    await waitForReceipts(pool);
    worker.kill("SIGTERM");
    await exited;
    const { statements } = JSON.parse(readFileSync(statsFile, "utf8")) as { statements: Record<string, CapturedStatement> };
    await pool.query("delete from chat_public.chats");
    const built = floorScript(CLIENT_TURN, statements);
    if ("skipped" in built) throw new Error(`${label}: ${built.skipped}`);
    return { label, name, dir, url, user, ...built, cpuMs: [] };
  } finally {
    await pool.end();
  }
}

/** One pgbench run of `turns` floor turns per client on a side; returns the server's CPU ms per turn. pgbench's
 * backends end with it: their CPU is counted once the postmaster has reaped them. */
async function measure(side: Side, admin: pg.Client): Promise<number> {
  const file = join(workspaces, `${side.label.replace(/\W/g, "_")}.sql`);
  writeFileSync(file, side.script);
  const defines = Object.entries({ ...side.variables, user_id: side.user }).flatMap(([k, v]) => ["-D", `${k}=${v}`]);
  const before = serverCpuMs(postmasterPid);
  const run = spawnSync("pgbench", ["-n", "-M", "prepared", "-c", clients, "-j", "1", "-t", turns, ...defines, "-f", file,
    side.url], { encoding: "utf8" });
  await backendsGone(admin, postmasterPid, { database: side.name });
  const after = serverCpuMs(postmasterPid);
  const processed = /number of transactions actually processed: ([0-9]+)/.exec(run.stdout);
  if (run.status !== 0 || processed == null) throw new Error(`${side.label}: pgbench failed: ${run.stderr.slice(0, 500)}`);
  return (after - before) / Number(processed[1]);
}

try {
  const sides = [await prepare("baseline", resolve(baseline), "floor_baseline"), await prepare("this tree", projectRoot, "floor_tree")];
  const rows: [string, string][] = [];
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  for (let round = 1; round <= Number(rounds); round += 1) {
    for (const side of sides) side.cpuMs.push(await measure(side, admin));
    rows.push([`round ${round} (load ${loadavg()[0]!.toFixed(2)}): PostgreSQL CPU ms per turn, baseline / this tree`,
      sides.map((s) => s.cpuMs.at(-1)!.toFixed(3)).join(" / ")]);
  }
  const medians = sides.map((s) => percentile([...s.cpuMs].sort((a, b) => a - b), 50));
  rows.push([`median over ${rounds} rounds of ${turns} turns × ${clients} clients, baseline / this tree`,
    `${medians.map((m) => m.toFixed(3)).join(" / ")} (this tree: ${(medians[1]! / medians[0]!).toFixed(3)} of the baseline)`]);
  await admin.end();
  // Exact counts, unlike times: statements executed per turn (nested ones included) and function calls per turn, in
  // one more run per side with both counters on (they cost CPU, so the measured rounds above ran without them).
  for (const side of sides) {
    const pool = new pg.Pool({ connectionString: side.url, max: 1 });
    try {
      await startProfiling(pool);
      const counting = new pg.Client({ connectionString: server.url });
      await counting.connect();
      await measure(side, counting);
      await counting.end();
      await pool.query("select pg_stat_clear_snapshot()");
      const { rows: [count] } = await pool.query<{ statements: string; functions: string }>(
        `select (select sum(calls) from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())) as statements,
                (select sum(calls) from pg_stat_user_functions) as functions`);
      const perTurn = (n: string | undefined) => (Number(n) / (Number(turns) * Number(clients))).toFixed(1);
      rows.push([`${side.label}: statements per turn (nested included; the counting run) / function calls per turn`,
        `${perTurn(count?.statements)} / ${perTurn(count?.functions)}`]);
      if (profileLimit > 0) rows.push(...await profileRows(pool, Number(turns) * Number(clients), true, profileLimit));
    } finally {
      await pool.end();
    }
  }
  console.log(`bench:floor-alternate — baseline ${resolve(baseline)}, ${new Date().toISOString()}`);
  printTable(rows);
} finally {
  await server.stop();
}
