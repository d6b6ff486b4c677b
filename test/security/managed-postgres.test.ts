// A managed PostgreSQL has no superuser for chatd: the owner is a login with CREATEROLE that owns chatd's
// database. chatd migrate, the worker (as chat_worker) and the API (as chatd_api) all work with it, end to end:
// a structured chat created over GraphQL is answered by the worker (with a login of its own, a member of chat_worker
// only, as docs/security.md provisions it) and its receipt read back. Then `chatd start` in production, with the
// worker's and the API's logins of their own: once it runs, no session of the owner's login is left, and none opens
// while /health, /metrics and GraphQL answer.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../src/db/database.ts";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withApiRole } from "../../src/api/api-role.ts";
import { signToken } from "../../src/api/auth.ts";
import { startApi, type ApiServer } from "../../src/api/server.ts";
import { withDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { OPERATOR_ROLE, withRole, workerDatabaseUrl } from "../../src/db/run-time-roles.ts";
import { startWorker, type RunningWorker } from "../../worker/index.ts";
import { launch } from "../support/chatd-process.ts";
import { sqlState } from "../support/db.ts";
import { testLogger, waitFor } from "../support/worker.ts";
import { tempFolder } from "../support/temp.ts";

const adminUrl = process.env.CHATD_TEST_ADMIN_URL!;
const runner = process.env.CHATD_TEST_TEMPLATE!.split("_").pop();
const suffix = randomBytes(4).toString("hex");
const ownerRole = `chatd_owner_${suffix}`;
// The worker's own login, as docs/security.md provisions it: a member of chat_worker and nothing else.
const workerLogin = `chatd_worker_login_${suffix}`;
const database = `chatd_t_${runner}_m${suffix}`;
const password = "owner-password-for-the-test";
// The cluster's chatd_api password, set once by the runner for all the files running at once.
const apiPassword = process.env.CHATD_API_PASSWORD!;
// The test's own sessions with the owner's login, told apart from chatd's in pg_stat_activity.
const testApplication = "managed-postgres test";

let ownerUrl: string;
let ownerPool: pg.Pool;
let worker: RunningWorker | undefined;
let api: ApiServer | undefined;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

test.before(async () => {
  await admin(`create role ${ownerRole} login createrole nosuperuser password '${password}'`);
  await admin(`create database ${database} owner ${ownerRole}`);
  const url = new URL(withDatabase(adminUrl, database));
  url.username = ownerRole;
  url.password = password;
  ownerUrl = url.toString();
  ownerPool = new pg.Pool({ connectionString: ownerUrl, max: 4, application_name: testApplication });
  ownerPool.on("error", () => {});
});
test.after(async () => {
  await api?.close();
  await worker?.stop();
  await ownerPool.end();
  await admin(`drop database if exists ${database} with (force)`);
  await admin(`drop role if exists ${workerLogin}`);
  await admin(`drop owned by ${ownerRole}`).catch(() => {});
  await admin(`drop role if exists ${ownerRole}`);
});

test("chatd migrate works as a non-superuser owner, and re-running it is a no-op", async () => {
  const { rows } = await ownerPool.query<{ rolsuper: boolean }>("select rolsuper from pg_roles where rolname = current_user");
  assert.is(rows[0]!.rolsuper, false);
  const first = await migrate(ownerUrl);
  assert.ok(first.migrationsApplied.length > 0);
  const policies = "select array_agg(oid::text order by oid) as oids from pg_policy where polname = 'chatd_worker'";
  const before = (await ownerPool.query<{ oids: string[] }>(policies)).rows[0]!.oids;
  assert.ok(before.length > 0, "chat_worker's policies on Graphile Worker's tables");
  const again = await migrate(ownerUrl);
  assert.equal([again.migrationsApplied, again.sqlFilesApplied], [[], []]);
  // Not recreated (CREATE POLICY would lock the job queue against running workers).
  assert.equal((await ownerPool.query<{ oids: string[] }>(policies)).rows[0]!.oids, before);
  const owners = await ownerPool.query<{ owner: string }>(
    "select distinct pg_get_userbyid(relowner) as owner from pg_class where relnamespace = 'chat_public'::regnamespace");
  assert.equal(owners.rows.map((row) => row.owner), [ownerRole]);
});

test("the worker's connections work as chat_worker, the operator commands' as chat_operator, with the owner's login", async () => {
  for (const [url, role] of [[workerDatabaseUrl(ownerUrl), "chat_worker"], [withRole(ownerUrl, OPERATOR_ROLE), "chat_operator"]] as const) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("select current_user::text as role, session_user::text as login");
      assert.equal(rows[0], { role, login: ownerRole });
    } finally {
      await client.end();
    }
  }
});

test("the worker's own login (CHATD_WORKER_DATABASE_URL) may take chat_worker and nothing more", async () => {
  await ownerPool.query(`create role ${workerLogin} login password '${password}' in role chat_worker`);
  const url = new URL(ownerUrl);
  url.username = workerLogin;
  const client = new pg.Client({ connectionString: workerDatabaseUrl(url.toString()) });
  await client.connect();
  try {
    const { rows } = await client.query("select current_user::text as role");
    assert.equal(rows[0], { role: "chat_worker" });
    assert.is(await sqlState(client.query(`set role ${ownerRole}`)), "42501");
    assert.is(await sqlState(client.query("create temporary table t (x int)")), "42501");
  } finally {
    await client.end();
  }
});

test("migrate, worker (its own login, as chat_worker) and API (chatd_api) run a structured chat end to end", async () => {
  await ownerPool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  const { rows: [user] } = await ownerPool.query<{ id: string }>("insert into chat_public.users (name) values ('managed') returning id");
  const workerUrl = new URL(ownerUrl);
  workerUrl.username = workerLogin;
  process.env.CHATD_WORKER_DATABASE_URL = workerUrl.toString();
  try {
    // databaseUrl is the owner's; the worker must not use it.
    worker = await startWorker({ databaseUrl: ownerUrl, logger: testLogger, concurrency: 2, workspacesRoot: await tempFolder("chatd-ws-") });
  } finally {
    delete process.env.CHATD_WORKER_DATABASE_URL;
  }
  const sessions = await ownerPool.query<{ login: string }>(
    "select distinct usename::text as login from pg_stat_activity where datname = current_database() and application_name <> 'chatd migrate' and pid <> pg_backend_pid()");
  assert.ok(sessions.rows.some((row) => row.login === workerLogin), JSON.stringify(sessions.rows));
  const secret = randomBytes(32).toString("hex");
  api = await startApi({ pool: ownerPool, port: 0, host: "127.0.0.1", apiDatabaseUrl: withApiRole(ownerUrl, apiPassword),
    jwtSecret: secret, development: false });
  const token = signToken(secret, user!.id);
  const gql = async (query: string, variables: object) => {
    const response = await fetch(api!.graphqlUrl, { method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
    return await response.json() as { data?: Record<string, { result?: { structuredOutputRequestId: string } }>; errors?: unknown[] };
  };
  const created = await gql(`mutation($c: JSON!, $rf: String) { createChat(input: {content: $c, responseFormat: $rf}) {
    result { structuredOutputRequestId } } }`, { c: [{ type: "text", text: "report" }],
    rf: JSON.stringify({ type: "json_schema", json_schema: { name: "report", schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } } }) });
  assert.not.ok(created.errors, JSON.stringify(created.errors));
  const requestId = created.data!.createChat!.result!.structuredOutputRequestId;
  const status = await waitFor("the receipt", async () => {
    const { rows } = await ownerPool.query<{ status: string }>("select status::text from chat_public.structured_output_requests where id = $1", [requestId]);
    return rows[0]?.status !== "pending" && rows[0]?.status;
  }, 60_000);
  assert.is(status, "succeeded");
});

/** chatd's sessions on the test's database with the owner's login (the test's own excluded), seen by the superuser. */
async function ownerSessions(): Promise<string[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ session: string }>(
      `select format('%s %s %s', pid, application_name, state) as session from pg_stat_activity
       where datname = $1 and usename = $2 and application_name <> $3`, [database, ownerRole, testApplication]);
    return rows.map((row) => row.session);
  } finally {
    await client.end();
  }
}

test("chatd worker runs with the worker's login alone (no owner's login anywhere, the schema check included)", async () => {
  const workerUrl = new URL(ownerUrl);
  workerUrl.username = workerLogin;
  const env: NodeJS.ProcessEnv = { ...process.env, CHATD_LOG_FORMAT: "json", CHATD_METRICS_PORT: "0", DATABASE_URL: workerUrl.toString(),
    CHATD_WORKSPACES_ROOT: await tempFolder("chatd-ws-") };
  delete env.CHATD_WORKER_DATABASE_URL;
  const chatd = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "worker"], { cwd: projectRoot, env });
  try {
    await chatd.waitFor("the worker started", (line) => line.msg === "worker started");
  } finally {
    chatd.child.kill("SIGTERM");
    await chatd.exited;
  }
});

test("chatd start in production with CHATD_API_DATABASE_URL and CHATD_WORKER_DATABASE_URL keeps no owner session", async () => {
  const workerUrl = new URL(ownerUrl);
  workerUrl.username = workerLogin;
  const secret = randomBytes(32).toString("hex");
  const metricsToken = randomBytes(16).toString("hex");
  const chatd = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "start"], { cwd: projectRoot, env: {
    ...process.env, NODE_ENV: "production", CHATD_LOG_FORMAT: "json", PORT: "0", CHATD_METRICS_PORT: "0",
    DATABASE_URL: ownerUrl, CHATD_WORKER_DATABASE_URL: workerUrl.toString(), CHATD_API_DATABASE_URL: withApiRole(ownerUrl, apiPassword),
    CHATD_JWT_SECRET: secret, CHATD_METRICS_TOKEN: metricsToken, CHATD_WORKSPACES_ROOT: await tempFolder("chatd-ws-"),
  } });
  try {
    const running = await chatd.waitFor("chatd is running", (line) => line.msg === "chatd is running");
    const started = await chatd.waitFor("the worker started", (line) => line.msg === "worker started");
    const url = String(running.url);
    // The worker's process holds its own login only: no variable of its environment names the owner's.
    const environment = readFileSync(`/proc/${started.pid}/environ`, "utf8").split("\0");
    assert.ok(environment.includes(`DATABASE_URL=${workerUrl.toString()}`), "the worker's DATABASE_URL is its own login");
    assert.equal(environment.filter((entry) => entry.includes(ownerRole)), [], "no owner's connection string");
    // migrate and the schema checks of chatd and its worker used the owner's login and closed it; their backends
    // leave pg_stat_activity as they exit.
    await waitFor("the start-up sessions of the owner to end", async () => (await ownerSessions()).length === 0, 10_000);
    const health = await fetch(`${url}/health`);
    assert.equal([health.status, await health.json()], [200, { ok: true }]);
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    assert.is(metrics.status, 200);
    // A labelled database gauge is there only when chat_private.service_gauges() answered chatd_api (the receipt of
    // the end-to-end test above).
    assert.match(await metrics.text(), /^chatd_receipts\{status="succeeded",code=""\} 1$/m);
    const { rows: [user] } = await ownerPool.query<{ id: string }>("select id from chat_public.users where name = 'managed'");
    const graphql = await fetch(`${url}/graphql`, { method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${signToken(secret, user!.id)}` },
      body: JSON.stringify({ query: "{ allChats { totalCount } }" }) });
    assert.equal(await graphql.json(), { data: { allChats: { totalCount: 1 } } });
    assert.equal(await ownerSessions(), [], "no session of the owner's login while the API and the worker run");
  } finally {
    chatd.child.kill("SIGTERM");
    await chatd.exited;
  }
});

test.run();
