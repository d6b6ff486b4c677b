// A Patroni cluster on loopback ports in a temp folder, for the HA fault test: one etcd member, two PostgreSQL 15
// nodes managed by Patroni with synchronous_mode, and HAProxy sending its port to whichever node answers Patroni's
// REST `GET /primary` (checks `inter 1s fall 2 rise 1`, `on-marked-down shutdown-sessions`: the reference setup of
// docs/high-availability.md). Debian's packages (`patroni`, `etcd-server`, `haproxy`; .ci/run installs them). When
// the test runs as root, everything runs as the `postgres` OS user. Every process is reported to a reaper process
// (test/support/reaper.ts) that ends them and removes the folder when the test closes it or dies, whatever the path.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../../../src/db/embedded.ts";
import { waitFor } from "../../support/wait.ts";
import { childrenOf, startReaper } from "../../support/reaper.ts";

const PG_BIN = "/usr/lib/postgresql/15/bin";
/**
 * Patroni's timings, lowered from its defaults (ttl 30, loop_wait 10, retry_timeout 10) so that a node loss is
 * noticed in about ttl seconds: Patroni requires loop_wait + 2 * retry_timeout <= ttl.
 */
export const PATRONI_TIMINGS = { ttl: 10, loop_wait: 2, retry_timeout: 4 } as const;
export const HAPROXY_CHECKS = "inter 1s fall 2 rise 1";

export interface HaNode {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  readonly dir: string;
}

interface Member { name: string; role: string; state: string }

export interface HaCluster {
  readonly root: string;
  readonly nodes: readonly HaNode[];
  /** A connection string through HAProxy, as the superuser. */
  url(database: string): string;
  /** Tells the reaper about a process the test started (killed, not its group, when the test ends). */
  track(pid: number): void;
  /** The member list from Patroni's REST `/cluster` (any node that answers). */
  members(): Promise<Member[]>;
  /** Waits until a node other than `not` answers `/primary` with 200. */
  waitForPrimary(not?: HaNode, timeoutMs?: number): Promise<HaNode>;
  /** Waits until one node is primary, the other a streaming sync standby, and a write through HAProxy commits. */
  waitForHealthy(timeoutMs?: number): Promise<{ primary: HaNode; standby: HaNode }>;
  /** Patroni's planned switchover (REST `POST /switchover`). */
  switchover(from: HaNode, to: HaNode): Promise<void>;
  /** kill -9 of the node's postmaster only (Patroni lives and restarts it). */
  killPostmaster(node: HaNode): void;
  /** kill -9 of the node's Patroni, postmaster and every backend: the node is lost. */
  killNode(node: HaNode): void;
  /** Starts the node's Patroni again (after killNode): it rejoins as a replica. */
  startNode(node: HaNode): void;
  /** Ends every process and removes the folder (the reaper does it; resolves when it is done). */
  remove(): Promise<void>;
}

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
  };
}

/** Whether Debian's packages and PostgreSQL 15 are installed (the test says what is missing otherwise). */
export function missingPrograms(): string[] {
  const programs = ["/usr/bin/patroni", "/usr/bin/etcd", "/usr/sbin/haproxy", join(PG_BIN, "postgres")];
  return programs.filter((program) => !existsSync(program));
}

function patroniConfig(node: HaNode, root: string, etcdPort: number): object {
  return {
    scope: "chatd-ha-test",
    namespace: "/chatd-ha-test/",
    name: node.name,
    log: { level: "INFO" },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    etcd3: { hosts: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ...PATRONI_TIMINGS,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          // Settings every node must share (a standby needs max_connections at least the primary's).
          parameters: { max_connections: 150, wal_log_hints: "on", max_wal_senders: 10, max_replication_slots: 10 },
        },
      },
      initdb: [{ encoding: "UTF8" }, "no-sync"],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pgPort}`,
      connect_address: `127.0.0.1:${node.pgPort}`,
      data_dir: join(node.dir, "data"),
      bin_dir: PG_BIN,
      pgpass: join(node.dir, "pgpass"),
      pg_hba: ["local all all trust", "host replication replicator 127.0.0.1/32 trust", "host all all 127.0.0.1/32 trust"],
      authentication: {
        replication: { username: "replicator", password: "ha-test-replication" },
        superuser: { username: "postgres", password: "ha-test-superuser" },
        rewind: { username: "rewind_user", password: "ha-test-rewind" },
      },
      // fsync off: only an operating-system crash would lose data, and the test kills processes, not the machine.
      // synchronous_commit stays on, so a commit is acknowledged only once the sync standby has it.
      parameters: { unix_socket_directories: node.dir, shared_buffers: "32MB", fsync: "off", listen_addresses: "127.0.0.1" },
    },
  };
}

function haproxyConfig(port: number, nodes: readonly HaNode[]): string {
  return [
    "global", "    maxconn 400",
    "defaults", "    mode tcp", "    retries 2", "    timeout connect 4s", "    timeout client 30m", "    timeout server 30m",
    "    timeout check 2s",
    "listen primary",
    `    bind 127.0.0.1:${port}`,
    "    option httpchk GET /primary",
    "    http-check expect status 200",
    `    default-server ${HAPROXY_CHECKS} on-marked-down shutdown-sessions`,
    ...nodes.map((node) => `    server ${node.name} 127.0.0.1:${node.pgPort} maxconn 200 check port ${node.restPort}`),
    "",
  ].join("\n");
}

async function rest(node: HaNode, path: string, init: RequestInit = {}, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(`http://127.0.0.1:${node.restPort}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: "" };
  }
}

function kill(pid: number | undefined): void {
  if (pid == null) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

export async function startHaCluster(): Promise<HaCluster> {
  const root = mkdtempSync(join(tmpdir(), "chatd-ha-"));
  chmodSync(root, 0o755);
  const reaper = startReaper(root);
  const owner = postgresUser();
  const owned = (path: string) => {
    if (owner != null) chownSync(path, owner.uid, owner.gid);
  };
  const [etcdPort, etcdPeer, haproxyPort] = [await freePort(), await freePort(), await freePort()];
  const nodes: HaNode[] = [];
  for (const name of ["node1", "node2"]) {
    const node = { name, pgPort: await freePort(), restPort: await freePort(), dir: join(root, name) };
    mkdirSync(node.dir, { mode: 0o700 });
    owned(node.dir);
    writeFileSync(join(node.dir, "patroni.yml"), JSON.stringify(patroniConfig(node, root, etcdPort), null, 1));
    nodes.push(node);
  }
  const patronis = new Map<string, ChildProcess>();
  // Each daemon in a process group of its own, as the postgres user, output to <root>/<name>.log.
  const daemon = (name: string, command: string, args: string[], cwd = root) => {
    const log = openSync(join(root, `${name}.log`), "a");
    const child = spawn(command, args, { cwd, detached: true, stdio: ["ignore", log, log], ...(owner ?? {}), env: { ...process.env, HOME: cwd } });
    closeSync(log);
    if (child.pid != null) reaper.track("group", child.pid);
    child.on("error", () => undefined);
    return child;
  };
  const cluster: HaCluster = {
    root, nodes,
    url: (database) => `postgres://postgres@127.0.0.1:${haproxyPort}/${database}`,
    track: (pid) => reaper.track("pid", pid),
    async members() {
      for (const node of nodes) {
        const answer = await rest(node, "/cluster");
        if (answer.status === 200) return (JSON.parse(answer.body) as { members: Member[] }).members;
      }
      return [];
    },
    async waitForPrimary(not, timeoutMs = 60_000) {
      return waitFor(`a primary other than ${not?.name ?? "none"}`, async () => {
        for (const node of nodes) if (node !== not && (await rest(node, "/primary")).status === 200) return node;
        return undefined;
      }, timeoutMs);
    },
    async waitForHealthy(timeoutMs = 120_000) {
      const primary = await cluster.waitForPrimary(undefined, timeoutMs);
      const standby = nodes.find((node) => node !== primary)!;
      await waitFor(`${standby.name} running as the sync standby`, async () =>
        (await rest(standby, "/replica")).status === 200
        && (await cluster.members()).some((m) => m.name === standby.name && m.role === "sync_standby" && ["running", "streaming"].includes(m.state)), timeoutMs);
      await waitFor("a write through HAProxy", async () => {
        const client = new pg.Client({ connectionString: cluster.url("postgres"), connectionTimeoutMillis: 2000 });
        client.on("error", () => undefined);
        try {
          await client.connect();
          await client.query("create table if not exists ha_health (at timestamptz default now()); insert into ha_health default values");
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => undefined);
        }
      }, timeoutMs);
      return { primary, standby };
    },
    async switchover(from, to) {
      const answer = await rest(from, "/switchover", { method: "POST", body: JSON.stringify({ leader: from.name, candidate: to.name }) },
        60_000);
      if (answer.status !== 200) throw new Error(`switchover ${from.name} -> ${to.name} refused: ${answer.status} ${answer.body}`);
    },
    killPostmaster(node) {
      kill(Number(readFileSync(join(node.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]));
    },
    killNode(node) {
      const postmaster = Number(readFileSync(join(node.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      const backends = childrenOf(postmaster);
      kill(patronis.get(node.name)?.pid);
      kill(postmaster);
      for (const pid of backends) kill(pid);
    },
    startNode(node) {
      patronis.set(node.name, daemon(`patroni-${node.name}-${patronis.size}`, "/usr/bin/patroni", [join(node.dir, "patroni.yml")], node.dir));
    },
    remove: () => reaper.reap(),
  };
  try {
    const etcdDir = join(root, "etcd");
    mkdirSync(etcdDir, { mode: 0o700 });
    owned(etcdDir);
    daemon("etcd", "/usr/bin/etcd", ["--name", "e1", "--data-dir", join(etcdDir, "data"),
      "--listen-client-urls", `http://127.0.0.1:${etcdPort}`, "--advertise-client-urls", `http://127.0.0.1:${etcdPort}`,
      "--listen-peer-urls", `http://127.0.0.1:${etcdPeer}`, "--initial-advertise-peer-urls", `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster", `e1=http://127.0.0.1:${etcdPeer}`, "--initial-cluster-token", "chatd-ha-test", "--initial-cluster-state", "new"]);
    await waitFor("etcd healthy", async () => {
      const health = await fetch(`http://127.0.0.1:${etcdPort}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.text()).catch(() => "");
      return health.includes('"health":"true"');
    }, 30_000);
    writeFileSync(join(root, "haproxy.cfg"), haproxyConfig(haproxyPort, nodes));
    daemon("haproxy", "/usr/sbin/haproxy", ["-f", join(root, "haproxy.cfg"), "-db"]);
    // node1 bootstraps the cluster first, so that node2 joins it as a replica instead of racing for the leader key.
    cluster.startNode(nodes[0]!);
    await cluster.waitForPrimary(undefined, 90_000);
    cluster.startNode(nodes[1]!);
    return cluster;
  } catch (error) {
    await cluster.remove();
    throw error;
  }
}
