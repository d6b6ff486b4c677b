// `chatd migrate` through a failover (src/db/migrate-failover.ts): a server that refuses writes as a demoted or
// restarting primary does (25006, here default_transaction_read_only server-wide on a private cluster) makes the
// migration wait and run again once the server is writable, instead of failing on the first refusal; the wait is
// bounded by CHATD_DB_WAIT_SECONDS, after which the refusal is the command's error. Real `chatd migrate` processes.
import { spawn } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { createCluster, type PrivateCluster } from "../faults/support/cluster.ts";

let cluster: PrivateCluster;

test.before(async () => {
  cluster = await createCluster();
});
test.after(async () => {
  await readOnly(false).catch(() => undefined);
  await cluster.remove();
});

async function readOnly(on: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url, options: "-c default_transaction_read_only=off" });
  await client.connect();
  try {
    await client.query(on ? "alter system set default_transaction_read_only = on" : "alter system reset default_transaction_read_only");
    await client.query("select pg_reload_conf()");
  } finally {
    await client.end();
  }
}

async function freshDatabase(name: string): Promise<string> {
  await cluster.pool.query(`create database ${name}`);
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return url.toString();
}

function chatdMigrate(url: string, waitSeconds: number) {
  const child = spawn(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "migrate"], {
    env: { ...process.env, DATABASE_URL: url, CHATD_LOG_LEVEL: "warn", CHATD_LOG_FORMAT: "json", CHATD_DB_WAIT_SECONDS: String(waitSeconds) },
    stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of waiters) waiter();
  });
  const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
  return {
    exited,
    stderr: () => stderr,
    /** Resolves once stderr matches (a barrier on the process's own line); rejects if it exits first. */
    line: (pattern: RegExp) => new Promise<void>((resolve, reject) => {
      const check = () => pattern.test(stderr) && resolve();
      waiters.push(check);
      check();
      void exited.then((code) => reject(new Error(`chatd migrate exited (${code}) before ${pattern}: ${stderr}`)));
    }),
  };
}

const migrated = async (url: string) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("select 1 from pg_namespace where nspname = 'chatd_meta'")).rowCount === 1;
  } finally {
    await client.end();
  }
};

test("chatd migrate refused as read-only waits for the primary, then migrates (exit 0)", async () => {
  const url = await freshDatabase("fresh_waits");
  await readOnly(true);
  const run = chatdMigrate(url, 120);
  try {
    await run.line(/migration lost its database connection/);
    assert.match(run.stderr(), /"code":"25006"/);
  } finally {
    await readOnly(false);
  }
  assert.is(await run.exited, 0, run.stderr());
  assert.ok(await migrated(url), "the schema was migrated");
});

test("past CHATD_DB_WAIT_SECONDS the refusal is the command's error (non-zero exit, nothing migrated)", async () => {
  const url = await freshDatabase("fresh_gives_up");
  await readOnly(true);
  try {
    const run = chatdMigrate(url, 1);
    const code = await run.exited;
    assert.is.not(code, 0, "it gives up");
    assert.match(run.stderr(), /read-only transaction/);
  } finally {
    await readOnly(false);
  }
  assert.not.ok(await migrated(url), "nothing half-applied");
});

test.run();
