// How an operator starts chatd, through the real commands against a private cluster (test/faults/support/cluster.ts):
// every connection string pg accepts (a Unix socket in `host=`, fields left to PG* variables), and a database that
// is not up yet when `worker`, `serve` or `start` starts: each waits for it (one line), then runs; none prints an
// uncaught exception.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { EXIT_UNREACHABLE } from "../../src/cli/exit-status.ts";
import { launch, type ChatdProcess, type LogLine } from "../support/chatd-process.ts";
import { runChatd } from "../support/cli.ts";
import { createCluster, type PrivateCluster } from "../faults/support/cluster.ts";

let cluster: PrivateCluster;
let socketDir: string;
const workspaces = mkdtempSync(join(tmpdir(), "chatd-startup-"));

test.before(async () => {
  cluster = await createCluster();
  socketDir = (await cluster.pool.query<{ dir: string }>("select current_setting('unix_socket_directories') as dir")).rows[0]!.dir;
});
test.after(async () => {
  await cluster.remove();
  rmSync(workspaces, { recursive: true, force: true });
});

const main = join(projectRoot, "src", "cli", "main.ts");
const commands = {
  worker: ["worker", "--metrics-port", "0"],
  serve: ["serve", "--port", "0"],
  start: ["start", "--port", "0", "--metrics-port", "0"],
} as const;
type Command = keyof typeof commands;
/** The line each command logs once it runs. */
const ready: Record<Command, (line: LogLine) => boolean> = {
  worker: (line) => line.msg === "worker started",
  serve: (line) => line.msg === "chatd is running",
  start: (line) => line.msg === "chatd is running",
};

function chatd(command: Command, env: NodeJS.ProcessEnv): ChatdProcess {
  const base: NodeJS.ProcessEnv = { ...process.env, CHATD_LOG_FORMAT: "json", CHATD_LOG_LEVEL: "info", CHATD_WORKSPACES_ROOT: workspaces };
  delete base.DATABASE_URL;
  return launch(process.execPath, [main, ...commands[command]], { cwd: projectRoot, env: { ...base, ...env } });
}

/** Stops a running command with SIGTERM; a clean stop exits 0. */
async function stop(child: ChatdProcess): Promise<void> {
  child.child.kill("SIGTERM");
  const exit = await child.exited;
  assert.equal(exit, { code: 0, signal: null }, `a clean stop:\n${child.lines.map((l) => l.raw).join("\n")}`);
}

const stackTraces = (child: ChatdProcess) => child.lines.filter((line) => line.level == null && /^\s+at |Error:/.test(line.raw));

/** The logins connected to the cluster through its Unix socket now (the test's own pool uses TCP). */
async function socketLogins(): Promise<string[]> {
  const { rows } = await cluster.pool.query<{ usename: string }>(
    "select distinct usename::text from pg_stat_activity where datname = 'chatd' and client_addr is null and usename is not null order by 1");
  return rows.map((row) => row.usename);
}

async function runsWith(label: string, env: NodeJS.ProcessEnv): Promise<void> {
  const migrated = await runChatd(["migrate"], env.DATABASE_URL!, undefined, env);
  assert.is(migrated.code, 0, `${label}: chatd migrate\n${migrated.out}`);
  for (const command of ["worker", "serve"] as const) {
    const child = chatd(command, env);
    try {
      const line = await child.waitFor(`${label}: ${command} running`, ready[command]);
      assert.ok((await socketLogins()).includes("postgres"), `${label}: ${command} is connected through the socket`);
      if (command === "serve") {
        const health = await fetch(`${String(line.url)}/health`);
        assert.is(health.status, 200, `${label}: serve answers /health`);
        assert.ok((await socketLogins()).includes("chatd_api"), `${label}: the API connects as chatd_api, not as the owner`);
      }
      assert.equal(stackTraces(child), [], `${label}: ${command} printed no stack trace`);
    } finally {
      await stop(child);
    }
  }
}

test("a Unix-socket URL (libpq's host= form): migrate, worker and serve run on it", async () => {
  await runsWith("socket", { DATABASE_URL: `postgresql://postgres@/chatd?host=${encodeURIComponent(socketDir)}&port=${cluster.port}` });
});

test("a URL that leaves host, port and user to PG* variables: migrate, worker and serve run on it", async () => {
  await runsWith("PG*", { DATABASE_URL: "postgresql:///chatd", PGHOST: socketDir, PGPORT: String(cluster.port), PGUSER: "postgres" });
});

for (const command of ["worker", "serve", "start"] as const) {
  test(`chatd ${command} started before its database waits for it (one line), then runs`, async () => {
    cluster.stop("fast");
    let child: ChatdProcess | undefined;
    try {
      child = chatd(command, { DATABASE_URL: cluster.url, CHATD_DB_WAIT_SECONDS: "120" });
      await child.waitFor("the wait's line", (line) => typeof line.msg === "string" && line.msg.startsWith("database unreachable"));
    } finally {
      cluster.start();
    }
    try {
      await child.waitFor(`${command} running`, ready[command]);
      const waits = child.lines.filter((line) => typeof line.msg === "string" && line.msg.startsWith("database unreachable"));
      assert.is(waits.length, 1, "the wait is logged once");
      assert.equal(stackTraces(child), [], "no stack trace");
      assert.equal(child.lines.filter((line) => (line.level ?? 0) >= 50).map((line) => line.raw), [], "no error line");
    } finally {
      await stop(child);
    }
  });
}

test("a database that stays away: each command gives up after CHATD_DB_WAIT_SECONDS with one line and its status", async () => {
  cluster.stop("fast");
  try {
    for (const command of ["worker", "serve", "start"] as const) {
      const child = chatd(command, { DATABASE_URL: cluster.url, CHATD_DB_WAIT_SECONDS: "1" });
      const exit = await child.exited;
      assert.equal(exit, { code: EXIT_UNREACHABLE, signal: null }, `${command}:\n${child.lines.map((l) => l.raw).join("\n")}`);
      assert.equal(stackTraces(child), [], `${command}: no stack trace`);
      const errors = child.lines.filter((line) => (line.level ?? 0) >= 50);
      assert.is(errors.length, 1, `${command}: one error line`);
      assert.match(String(errors[0]!.msg), /not reachable within 1 s \(CHATD_DB_WAIT_SECONDS\)/);
    }
  } finally {
    cluster.start();
  }
});

test.run();
