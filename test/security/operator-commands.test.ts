// `chatd ops`, `chatd batch` and `chatd token` work as chat_operator, not as the owner: run as real processes with
// DATABASE_URL set to a login that is a member of chat_operator and nothing else (docs/security.md provisions one),
// each command works; with a login that may not take chat_operator, none runs with the login's own rights.
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import jwt from "jsonwebtoken";
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runChatd } from "../support/cli.ts";
import { setStructuredExperiment } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { tempFolder } from "../support/temp.ts";

const suffix = randomBytes(4).toString("hex");
const operatorLogin = `chatd_ops_login_${suffix}`;
const strangerLogin = `chatd_stranger_${suffix}`;
const password = "operator-login-password";
const secret = randomBytes(32).toString("hex");

let db: TestDatabase;
let operatorUrl: string;
let strangerUrl: string;

function loginUrl(name: string): string {
  const url = new URL(db.url);
  url.username = name;
  url.password = password;
  return url.toString();
}

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  await db.pool.query(`create role ${operatorLogin} login password '${password}' in role chat_operator`);
  await db.pool.query(`create role ${strangerLogin} login password '${password}'`);
  operatorUrl = loginUrl(operatorLogin);
  strangerUrl = loginUrl(strangerLogin);
  process.env.CHATD_JWT_SECRET = secret;
});
test.after(async () => {
  await db.drop();
  await db.pool.query(`drop role if exists ${operatorLogin}`).catch(() => {});
  await db.pool.query(`drop role if exists ${strangerLogin}`).catch(() => {});
});

test("chatd token, as chat_operator: creates the user on first use, then reuses it", async () => {
  const first = await runChatd(["token", "--user", "olivia"], operatorUrl);
  assert.is(first.code, 0, first.out);
  const second = await runChatd(["token", "--user", "olivia"], operatorUrl);
  assert.is(second.code, 0, second.out);
  const subjects = [first.out, second.out].map((out) => (jwt.verify(out.trim(), secret) as { sub: string }).sub);
  const { rows } = await db.pool.query<{ id: string }>("select id from chat_public.users where name = 'olivia'");
  assert.equal(subjects, [rows[0]!.id, rows[0]!.id]);
});

test("chatd batch submit, status, results and cancel, as chat_operator", async () => {
  const dir = await tempFolder("chatd-ops-");
  await writeFile(join(dir, "schema.json"), JSON.stringify({ type: "object" }));
  await writeFile(join(dir, "input.jsonl"), '"one"\n"two"\n');
  const submitted = await runChatd(["batch", "submit", "--schema", join(dir, "schema.json"), "--input", join(dir, "input.jsonl"),
    "--user", "oscar"], operatorUrl);
  assert.is(submitted.code, 0, submitted.out);
  const id = submitted.out.trim().split("\n").at(-1)!;
  const { rows } = await db.pool.query<{ owner: string }>(
    "select u.name as owner from chat_public.batches b join chat_public.users u on u.id = b.owner_id where b.id = $1", [id]);
  assert.equal(rows, [{ owner: "oscar" }], "the batch is the named user's");
  const status = await runChatd(["batch", "status", id], operatorUrl);
  assert.is(status.code, 0, status.out);
  assert.match(status.out, `batch ${id}`);
  const results = await runChatd(["batch", "results", id], operatorUrl);
  assert.is(results.code, 0, results.out);
  const canceled = await runChatd(["batch", "cancel", id], operatorUrl);
  assert.is(canceled.code, 0, canceled.out);
  assert.match(canceled.out, `batch ${id}: canceled`);
});

test("chatd ops status, as chat_operator (Graphile Worker's queue through chat_private.job_queue)", async () => {
  const status = await runChatd(["ops", "status"], operatorUrl);
  assert.is(status.code, 0, status.out);
  assert.match(status.out, "== workers");
  assert.match(status.out, "== active batches");
});

test("chatd ops delete-chat and delete-user, as chat_operator", async () => {
  const { rows: [user] } = await db.pool.query<{ id: string }>("insert into chat_public.users (name) values ('leaving') returning id");
  const chat = await db.as("chat_user", user!.id, (c) => c.query<{ chat_id: string }>(
    `select chat_id from chat_public.create_chat(content => '[{"type": "text", "text": "hi"}]')`), true);
  const deleteChat = await runChatd(["ops", "delete-chat", chat.rows[0]!.chat_id], operatorUrl);
  assert.is(deleteChat.code, 0, deleteChat.out);
  assert.match(deleteChat.out, "chats: 1");
  const deleteUser = await runChatd(["ops", "delete-user", "leaving", "--yes"], operatorUrl);
  assert.is(deleteUser.code, 0, deleteUser.out);
  assert.match(deleteUser.out, "deleted user leaving");
  const { rows } = await db.pool.query("select 1 from chat_public.users where id = $1", [user!.id]);
  assert.is(rows.length, 0);
});

test("a login that may not take chat_operator runs none of them", async () => {
  for (const args of [["token", "--user", "mallory"], ["ops", "status"], ["batch", "status", randomBytes(16).toString("hex")],
    ["ops", "delete-chat", "00000000-0000-4000-8000-000000000000"], ["ops", "delete-user", "mallory", "--yes"]]) {
    const run = await runChatd(args, strangerUrl);
    assert.is.not(run.code, 0, args.join(" "));
    assert.match(run.out, "permission denied to set role \"chat_operator\"", args.join(" "));
  }
  const { rows } = await db.pool.query("select 1 from chat_public.users where name = 'mallory'");
  assert.is(rows.length, 0);
});

test("chat_operator may create a user's name and change nothing else of a user", async () => {
  const client = new pg.Client({ connectionString: operatorUrl });
  await client.connect();
  try {
    await client.query("set role chat_operator");
    await client.query("insert into chat_public.users (name) values ('quinn')");
    for (const sql of ["insert into chat_public.users (id, name) values (gen_random_uuid(), 'rita')",
      "update chat_public.users set name = 'renamed' where name = 'quinn'", "delete from chat_public.users where name = 'quinn'"]) {
      const code = await client.query(sql).then(() => "ok", (error: { code?: string }) => error.code);
      assert.is(code, "42501", sql);
    }
  } finally {
    await client.end();
  }
});

test.run();
