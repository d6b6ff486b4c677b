// The run-time roles are applied to every connection string pg accepts, and pg reads the result as the same
// connection plus the role: checked with pg-connection-string, the parser pg itself uses.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "pg-connection-string";
import { withApiRole } from "../../src/api/api-role.ts";
import { splitPassword } from "../../src/cli/psql-command.ts";
import { withRole } from "../../src/db/run-time-roles.ts";

const forms = [
  "postgres://owner:s%2Fecret@db.example:5433/chatd",
  "postgresql://root@/chatd?host=%2Fvar%2Frun%2Fpostgresql",
  "postgresql://root:pw@/chatd?host=%2Fvar%2Frun%2Fpostgresql&port=5433",
  "postgresql:///chatd",
  "postgresql://",
  "postgres://owner@db.example/chatd?sslmode=disable&application_name=deploy",
  "postgres://owner@db.example/chatd?options=-c%20statement_timeout%3D5s",
  "socket://root@/var/run/postgresql?db=chatd",
  "/var/run/postgresql chatd",
];

const parsed = (connectionString: string) => ({ ...parse(connectionString) }) as Record<string, unknown>;
/** What pg connects with, ignoring pg-connection-string's echo of `db` for socket: URLs and null placeholders. */
const fields = (connectionString: string) => Object.fromEntries(Object.entries(parsed(connectionString))
  .filter(([key, value]) => value != null && value !== "" && key !== "db" && key !== "client_encoding"));

test("withRole: pg reads the same connection with the role's startup option added, for every form", () => {
  for (const form of forms) {
    const before = fields(form);
    const options = [before.options, "-c role=chat_worker"].filter(Boolean).join(" ");
    assert.equal(fields(withRole(form, "chat_worker")), { ...before, options }, form);
  }
});

test("withRole keeps PGOPTIONS when the string gives no options", () => {
  process.env.PGOPTIONS = "-c search_path=x";
  try {
    assert.is(fields(withRole("postgresql:///chatd", "chat_operator")).options, "-c search_path=x -c role=chat_operator");
  } finally {
    delete process.env.PGOPTIONS;
  }
});

test("withApiRole: the API's user and password replace the owner's, whatever the form (never the owner's password)", () => {
  for (const form of forms) {
    const before = fields(form);
    delete before.user;
    delete before.password;
    assert.equal(fields(withApiRole(form, "p@ss word")), { ...before, user: "chatd_api", password: "p@ss word" }, form);
    const none = fields(withApiRole(form, null));
    assert.is(none.user, "chatd_api", form);
    assert.is(none.password, undefined, `${form}: no password at all, not the owner's`);
  }
});

test("splitPassword: psql gets the connection string without its password, in any form", () => {
  assert.equal(splitPassword("postgresql://root:pw@/chatd?host=%2Fvar%2Frun%2Fpostgresql"),
    { url: "postgresql://root@/chatd?host=%2Fvar%2Frun%2Fpostgresql", password: "pw" });
  assert.equal(splitPassword("postgresql:///chatd?password=pw&user=u"), { url: "postgresql:///chatd?user=u", password: "pw" });
});

test("a role name that is not a plain identifier is refused", () => {
  assert.throws(() => withRole("postgresql:///chatd", "x; drop"), /not a plain setting: role=x; drop/);
});

test.run();
