// chatd behind PgBouncer 1.18 in transaction mode (CHATD_DATABASE_POOLER=transaction, src/db/pooler.ts): real
// `chatd migrate`, `chatd worker` and `chatd serve` processes whose pooled connections go through Debian's
// pgbouncer in front of a private cluster complete structured requests with one receipt each. The worker's and the
// API's logins work as their run-time role by themselves (`alter role ... set role`), LISTEN and the migration go to
// CHATD_DIRECT_DATABASE_URL. The owner's login is not in PgBouncer's user list, so `chatd migrate` succeeds only
// over the direct URL. Contrast: the startup option chatd sends without the setting is refused by PgBouncer (08P01).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createChatdClient } from "@chatd/client";
import { projectRoot } from "../../src/db/database.ts";
import { WORKER_ROLE, withRole } from "../../src/db/run-time-roles.ts";
import { launch, type ChatdProcess } from "../support/chatd-process.ts";
import { runChatd } from "../support/cli.ts";
import { createCluster, type PrivateCluster } from "../faults/support/cluster.ts";
import { finalize, script } from "../client/stack.ts";
import { startPgBouncer, type Bouncer } from "./support/pgbouncer.ts";

const DATABASE = "pooled";
const WORKER_LOGIN = "chatd_worker_login";
const API_LOGIN = "chatd_api";
/** A member of chat_worker whose login was not set to work as it (`alter role ... set role` forgotten). */
const UNSET_LOGIN = "chatd_worker_unset";

let cluster: PrivateCluster;
let bouncer: Bouncer | undefined;
const workspaces = mkdtempSync(join(tmpdir(), "chatd-pgbouncer-ws-"));
const children: ChatdProcess[] = [];

test.before(async () => {
  cluster = await createCluster();
  // The roles are cluster-wide (made by the cluster's own migration); the pooled database is migrated by the test.
  await cluster.pool.query(`create database ${DATABASE}`);
  await cluster.pool.query(`create role ${WORKER_LOGIN} login in role ${WORKER_ROLE}`);
  await cluster.pool.query(`alter role ${WORKER_LOGIN} set role ${WORKER_ROLE}`);
  await cluster.pool.query(`alter role ${API_LOGIN} login`);
  await cluster.pool.query(`create role ${UNSET_LOGIN} login in role ${WORKER_ROLE}`);
  bouncer = await startPgBouncer({ serverPort: cluster.port, databases: [DATABASE], users: [WORKER_LOGIN, API_LOGIN, UNSET_LOGIN, "bouncer_admin"],
    poolMode: "transaction", poolSize: 4 });
});
test.after(async () => {
  for (const child of children) {
    if (child.child.exitCode == null && child.child.signalCode == null) {
      child.child.kill("SIGKILL");
      await child.exited;
    }
  }
  await bouncer?.stop();
  await cluster.remove();
  rmSync(workspaces, { recursive: true, force: true });
});

const direct = (user: string) => `postgres://${user}@127.0.0.1:${cluster.port}/${DATABASE}`;

function chatd(args: string[], env: NodeJS.ProcessEnv): ChatdProcess {
  const base: NodeJS.ProcessEnv = { ...process.env, CHATD_LOG_FORMAT: "json", CHATD_LOG_LEVEL: "info", CHATD_WORKSPACES_ROOT: workspaces };
  delete base.DATABASE_URL;
  const child = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), ...args], { cwd: projectRoot, env: { ...base, ...env } });
  children.push(child);
  return child;
}

async function withDirect<T>(fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: direct("postgres") });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

async function stop(child: ChatdProcess): Promise<void> {
  child.child.kill("SIGTERM");
  assert.equal(await child.exited, { code: 0, signal: null }, `a clean stop:\n${child.lines.map((l) => l.raw).join("\n")}`);
}

test("without the setting: the run-time role's startup option is refused by PgBouncer (08P01)", async () => {
  const client = new pg.Client({ connectionString: withRole(bouncer!.url(WORKER_LOGIN, DATABASE), WORKER_ROLE) });
  client.on("error", () => undefined);
  const refused = await client.connect().then(() => undefined, (error: unknown) => error as { code?: string; message?: string });
  await client.end().catch(() => undefined);
  assert.ok(refused != null, "PgBouncer accepted the options startup parameter");
  assert.is(refused.code, "08P01", String(refused.message));
  assert.match(String(refused.message), /unsupported startup parameter: options/);
});

test("migrate, worker and serve through PgBouncer (transaction mode): structured requests, one receipt each", async () => {
  const pooler = { CHATD_DATABASE_POOLER: "transaction", CHATD_DIRECT_DATABASE_URL: direct("postgres") };
  // The owner's login is not in PgBouncer's user list: through it the migration would be refused.
  const migrated = await runChatd(["migrate"], bouncer!.url("postgres", DATABASE), undefined, pooler);
  assert.is(migrated.code, 0, `chatd migrate over the direct URL\n${migrated.out}`);
  await withDirect((db) => db.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'"));
  // Operator commands work as chat_operator by the startup option: also direct.
  const token = await runChatd(["token", "--user", "operator-made"], bouncer!.url("postgres", DATABASE), undefined, pooler);
  assert.is(token.code, 0, `chatd token over the direct URL\n${token.out}`);
  const worker = chatd(["worker", "--metrics-port", "0"], { ...pooler, DATABASE_URL: bouncer!.url(WORKER_LOGIN, DATABASE) });
  const serve = chatd(["serve", "--port", "0"], { ...pooler, DATABASE_URL: direct("postgres"),
    CHATD_WORKER_DATABASE_URL: bouncer!.url(WORKER_LOGIN, DATABASE), CHATD_API_DATABASE_URL: bouncer!.url(API_LOGIN, DATABASE) });
  await worker.waitFor("chatd worker started", (line) => line.msg === "worker started");
  const tokenLine = await serve.waitFor("the development token", (line) => typeof line.token === "string");
  const running = await serve.waitFor("chatd serve running", (line) => line.msg === "chatd is running");
  const client = createChatdClient({ url: `${String(running.url)}/graphql`, token: String(tokenLine.token) });
  const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false } as const;
  try {
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) =>
      // A bound, not a barrier: a receipt lost with a pooled LISTEN fails the test instead of hanging the file.
      client.structured({ prompt: script(finalize(`{"n": ${n}}`)), schema, signal: AbortSignal.timeout(60_000) })));
    for (const [index, result] of results.entries()) {
      assert.is(result.status, "succeeded", JSON.stringify(result.error));
      if (result.status === "succeeded") assert.is(result.value.n, index + 1);
    }
    await withDirect(async (db) => {
      const { rows } = await db.query<{ id: string; status: string; receipts: number }>(
        `select r.id::text, r.status, (select count(*)::int from chat_public.chat_messages m
           where m.structured_output_request_id = r.id and m.kind = 'receipt') as receipts
         from chat_public.structured_output_requests r where r.id = any($1::uuid[]) order by r.id`, [results.map((r) => r.requestId)]);
      assert.is(rows.length, 6);
      for (const row of rows) assert.equal([row.status, row.receipts], ["succeeded", 1], row.id);
    });
    // The pooled connections went through PgBouncer (a pool for each run-time login); the LISTEN connections did not.
    const admin = new pg.Client({ connectionString: bouncer!.url("bouncer_admin", "pgbouncer") });
    await admin.connect();
    try {
      const pools = (await admin.query<{ database: string; user: string }>("show pools")).rows;
      for (const login of [WORKER_LOGIN, API_LOGIN]) {
        assert.ok(pools.some((pool) => pool.database === DATABASE && pool.user === login), `${login} through PgBouncer: ${JSON.stringify(pools)}`);
      }
      const bouncerPorts = new Set((await admin.query<{ local_port: number }>("show servers")).rows.map((row) => Number(row.local_port)));
      const backends = await withDirect(async (db) => (await db.query<{ usename: string; client_port: number; query: string }>(
        "select usename::text, client_port, query from pg_stat_activity where datname = $1 and usename = any($2)",
        [DATABASE, [WORKER_LOGIN, API_LOGIN]])).rows);
      for (const login of [WORKER_LOGIN, API_LOGIN]) {
        assert.ok(backends.some((backend) => backend.usename === login && /^(un)?listen /i.test(backend.query) && !bouncerPorts.has(backend.client_port)),
          `a direct LISTEN connection of ${login}: ${JSON.stringify(backends)} (PgBouncer's: ${[...bouncerPorts].join(", ")})`);
      }
    } finally {
      await admin.end();
    }
  } finally {
    await client.close();
  }
  await stop(worker);
  await stop(serve);
});

test("a pooled worker login that does not work as chat_worker by itself (a member only) is refused at start-up", async () => {
  const worker = chatd(["worker", "--metrics-port", "0"], { CHATD_DATABASE_POOLER: "transaction",
    CHATD_DIRECT_DATABASE_URL: direct("postgres"), DATABASE_URL: bouncer!.url(UNSET_LOGIN, DATABASE) });
  const exit = await worker.exited;
  const output = worker.lines.map((line) => line.raw).join("\n");
  assert.not.equal(exit.code, 0, output);
  assert.match(output, /login chatd_worker_unset works as chatd_worker_unset, not chat_worker/, output);
});

test.run();
