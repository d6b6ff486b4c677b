// `chatd psql` (src/cli/psql-command.ts) in a child process against the test database: it reaches the database
// DATABASE_URL names, passes arguments after `--` to psql, exits with psql's code, and keeps the password out of
// psql's command line (PGPASSWORD instead).
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { splitPassword } from "../../src/cli/psql-command.ts";
import { runChatd } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
const psqlOnPath = spawnSync("psql", ["--version"]).error == null;

test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

const chatdPsql = (url: string, args: string[]) => runChatd(["psql", "--", ...args], url);

test("splitPassword takes the (percent-encoded) password out of the URL", () => {
  assert.equal(splitPassword("postgres://postgres:a%2Fb%40c@127.0.0.1:5432/chatd"),
    { url: "postgres://postgres@127.0.0.1:5432/chatd", password: "a/b@c" });
  assert.equal(splitPassword("postgres://root@127.0.0.1:5432/test"), { url: "postgres://root@127.0.0.1:5432/test", password: "" });
});

test("chatd psql runs psql on DATABASE_URL's database and exits with psql's code", async () => {
  if (!psqlOnPath) {
    console.log("  (psql is not on PATH: the child-process half of this test cannot run here)");
    return;
  }
  const ok = await chatdPsql(db.url, ["-Atc", "select current_database()"]);
  assert.is(ok.code, 0, ok.out);
  assert.is(ok.out.trim(), new URL(db.url).pathname.slice(1));
  const failed = await chatdPsql(db.url, ["-v", "ON_ERROR_STOP=1", "-c", "select 1/0"]);
  assert.is(failed.code, 1, failed.out);
  assert.match(failed.out, /division by zero/);
});

test.run();
