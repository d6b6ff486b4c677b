// Debian's PgBouncer (/usr/sbin/pgbouncer) in a temp folder on a free port, in front of a private cluster
// (test/faults/support/cluster.ts): trust authentication for the logins listed, one pool per (database, login).
// Started as the `postgres` OS user when the tests run as root (PgBouncer refuses to run as root); ready when it
// logs "process up". stop() kills it and removes the folder; the test calls it on every path, and a reaper process
// (test/support/reaper.ts) does the same if the test process dies first (a file killed on timeout).
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../src/db/embedded.ts";
import { startReaper } from "../../support/reaper.ts";

export const PGBOUNCER = "/usr/sbin/pgbouncer";

export interface Bouncer {
  port: number;
  /** A connection string through PgBouncer for `user` to `database`. */
  url(user: string, database: string): string;
  /** PgBouncer's output so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(options: { serverPort: number; databases: string[]; users: string[];
  poolMode: "transaction" | "session"; poolSize: number }): Promise<Bouncer> {
  const dir = mkdtempSync(join(tmpdir(), "chatd-ha-pgbouncer-"));
  chmodSync(dir, 0o755);
  const reaper = startReaper(dir);
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const userlist = join(dir, "userlist.txt");
  writeFileSync(userlist, options.users.map((user) => `"${user}" ""\n`).join(""), { mode: 0o644 });
  writeFileSync(ini, [
    "[databases]",
    ...options.databases.map((name) => `${name} = host=127.0.0.1 port=${options.serverPort} dbname=${name}`),
    "[pgbouncer]",
    "listen_addr = 127.0.0.1", `listen_port = ${port}`, "unix_socket_dir =",
    "auth_type = trust", `auth_file = ${userlist}`,
    `pool_mode = ${options.poolMode}`, `default_pool_size = ${options.poolSize}`, "max_client_conn = 1000",
    "admin_users = bouncer_admin", "",
  ].join("\n"), { mode: 0o644 });
  const asPostgres = process.getuid?.() === 0 ? {
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
  } : {};
  const child = spawn(PGBOUNCER, [ini], { ...asPostgres, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid != null) reaper.track("pid", child.pid);
  let output = "";
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode == null && child.signalCode == null) {
      child.kill("SIGKILL");
      await exited;
    }
    await reaper.reap();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/process up/.test(output)) resolve();
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("error", reject);
      void exited.then(() => reject(new Error(`pgbouncer exited before it was up: ${output}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    port,
    url: (user, database) => `postgres://${user}@127.0.0.1:${port}/${database}`,
    log: () => output,
    stop,
  };
}
