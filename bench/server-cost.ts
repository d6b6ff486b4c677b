// What PostgreSQL spends on the benchmarks' turns: the server's CPU from /proc (the postmaster, its live children,
// and the children it has reaped: every backend that served the run, however short-lived) and a per-statement and
// per-function profile from pg_stat_statements and pg_stat_user_functions. The bench's own cluster preloads
// pg_stat_statements with tracking off (bench/support.ts), so measured runs pay nothing for it; only the sessions of
// the profiled run turn it on (startProfiling), as they do track_functions.
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";

/** Clock ticks per second of /proc's CPU fields (USER_HZ: 100 on Linux for every architecture Node supports). */
const TICKS_PER_SECOND = 100;

/** Fields 14–17 of /proc/<pid>/stat (utime, stime, cutime, cstime), in ticks; null when the process is gone. */
function cpuTicks(pid: number): { own: number; children: number; ppid: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const at = (field: number) => Number(fields[field - 3]);
  return { own: at(14) + at(15), children: at(16) + at(17), ppid: at(4) };
}

/** CPU milliseconds a process has used so far (its threads; not its children), or NaN when it is gone. */
export function processCpuMs(pid: number): number {
  const ticks = cpuTicks(pid);
  return ticks == null ? NaN : (ticks.own * 1000) / TICKS_PER_SECOND;
}

/** CPU milliseconds the whole server has used so far: the postmaster with every process it started, live or reaped. */
export function serverCpuMs(postmasterPid: number): number {
  const postmaster = cpuTicks(postmasterPid);
  if (postmaster == null) return NaN;
  let ticks = postmaster.own + postmaster.children;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const child = cpuTicks(Number(entry));
    if (child?.ppid === postmasterPid) ticks += child.own;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** Whether a child of the postmaster is exiting or exited and not yet reaped, or (given `database`) is a backend of
 * that database. Only once the postmaster has reaped a backend is its CPU in the postmaster's own counters: read
 * while the backend is exiting, it could be missed by both the postmaster's counters and the list of live children.
 * An exiting process has released its memory before it is a zombie, and its cmdline reads empty then (without
 * counting those, about one floor-alternate reading in twelve lost a whole run's backend CPU). */
function backendsLeft(postmasterPid: number, database: string | undefined): boolean {
  return readdirSync("/proc").some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== postmasterPid) return false;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      return stat.includes(" Z ") || cmdline === "" || (database !== undefined && cmdline.includes(` ${database} `));
    } catch {
      return false;
    }
  });
}

/** Waits until the sessions of a database, or of an application (pgbench's are "pgbench"), are gone and their
 * backends reaped, so that serverCpuMs counts the CPU of the sessions that just ended; an error after 30 s. */
export async function backendsGone(admin: pg.ClientBase | pg.Pool, postmasterPid: number,
  sessions: { database: string } | { application: string }): Promise<void> {
  const [column, value] = "database" in sessions ? ["datname", sessions.database] : ["application_name", sessions.application];
  const database = "database" in sessions ? sessions.database : undefined;
  const deadline = Date.now() + 30_000;
  while ((await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where ${column} = $1`,
    [value])).rows[0]!.n > 0 || backendsLeft(postmasterPid, database)) {
    if (Date.now() > deadline) throw new Error(`sessions of ${value} were still there 30 s after their clients ended`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** From now on, sessions that connect to the pool's database time every statement (nested ones too) and every
 * function call; the counters start from zero. Returns whether pg_stat_statements is there (not on a DATABASE_URL
 * server that does not preload it: functions only then). */
export async function startProfiling(pool: pg.Pool): Promise<boolean> {
  const database = pg.escapeIdentifier((await pool.query<{ name: string }>("select current_database() as name")).rows[0]!.name);
  await pool.query(`alter database ${database} set track_functions = 'all'`);
  await pool.query("select pg_stat_reset()");
  try {
    await pool.query("create extension if not exists pg_stat_statements");
    await pool.query(`alter database ${database} set pg_stat_statements.track = 'all'`);
    await pool.query("select pg_stat_statements_reset()");
    return true;
  } catch {
    return false;
  }
}

/** Top `limit` statements by total execution time and functions by self time, per turn. A top-level statement's
 * time includes the nested statements it ran (they are listed too, marked "nested" when not top level). */
export async function profileRows(pool: pg.Pool, turns: number, statements: boolean, limit = 10): Promise<[string, string][]> {
  // Other backends flush their counters when their transactions end, at most once a second; the profiled run's
  // sessions have ended.
  await pool.query("select pg_stat_clear_snapshot()");
  const rows: [string, string][] = [];
  if (statements) {
    const { rows: top } = await pool.query<{ query: string; calls: string; total: number; toplevel: boolean }>(
      `select regexp_replace(query, '\\s+', ' ', 'g') as query, sum(calls) as calls, sum(total_exec_time) as total, toplevel
       from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
       group by 1, toplevel order by 3 desc limit $1`, [limit]);
    for (const s of top) {
      rows.push([`  stmt ${s.toplevel ? "" : "(nested) "}${s.query.slice(0, 90)}`,
        `${(s.total / turns).toFixed(3)} ms/turn, ${(Number(s.calls) / turns).toFixed(1)} calls/turn`]);
    }
  }
  const { rows: fns } = await pool.query<{ name: string; calls: string; self_ms: number; total_ms: number }>(
    `select schemaname || '.' || funcname as name, calls, self_time as self_ms, total_time as total_ms
     from pg_stat_user_functions order by self_time desc limit $1`, [limit]);
  for (const f of fns) {
    rows.push([`  fn ${f.name}`, `self ${(f.self_ms / turns).toFixed(3)} ms/turn, total ${(f.total_ms / turns).toFixed(3)} ms/turn, ` +
      `${(Number(f.calls) / turns).toFixed(1)} calls/turn`]);
  }
  // Rows read by sequential scans: on tables that grow with the chats, a missing index shows here first.
  const { rows: scans } = await pool.query<{ name: string; rows: string }>(
    `select schemaname || '.' || relname as name, seq_tup_read as rows from pg_stat_user_tables
     where seq_tup_read > 0 order by seq_tup_read desc limit $1`, [limit]);
  for (const t of scans) rows.push([`  seq scan ${t.name}`, `${(Number(t.rows) / turns).toFixed(1)} rows read/turn`]);
  // Row versions written: each non-HOT update (an indexed column changed, or no room on the page) inserts into every
  // index of its table, as an insert does; a HOT update writes the heap only.
  const { rows: writes } = await pool.query<{ name: string; ins: string; upd: string; hot: string; del: string }>(
    `select schemaname || '.' || relname as name, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del
     from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del > 0
     order by n_tup_ins + n_tup_upd + n_tup_del desc limit $1`, [limit]);
  const perTurn = (n: string) => (Number(n) / turns).toFixed(1);
  for (const t of writes) {
    rows.push([`  writes ${t.name}`, `${perTurn(t.ins)} inserts, ${perTurn(t.upd)} updates (${perTurn(t.hot)} HOT), ` +
      `${perTurn(t.del)} deletes /turn`]);
  }
  return rows;
}
