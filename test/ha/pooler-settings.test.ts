// CHATD_DATABASE_POOLER and CHATD_DIRECT_DATABASE_URL (src/db/pooler.ts): the accepted values, and the direct
// connection string of a pooled one as pg reads it (pg-connection-string, the parser pg itself uses): the direct
// server and database with the pooled login, so each part of chatd keeps its own login on both paths.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "pg-connection-string";
import { directUrl, poolerMode } from "../../src/db/pooler.ts";

const fields = (url: string) => {
  const { user, password, host, port, database } = parse(url);
  return { user, password: password || undefined, host, port, database };
};

test("poolerMode: unset, empty and session are session; transaction; anything else is refused", () => {
  assert.is(poolerMode({}), "session");
  assert.is(poolerMode({ CHATD_DATABASE_POOLER: "" }), "session");
  assert.is(poolerMode({ CHATD_DATABASE_POOLER: "session" }), "session");
  assert.is(poolerMode({ CHATD_DATABASE_POOLER: "transaction" }), "transaction");
  assert.throws(() => poolerMode({ CHATD_DATABASE_POOLER: "statement" }), /CHATD_DATABASE_POOLER: session or transaction is required \(got statement\)/);
});

test("directUrl: the pooled string as is in session mode; transaction mode needs CHATD_DIRECT_DATABASE_URL", () => {
  const pooled = "postgres://worker:w%40pw@bouncer:6432/chatd";
  assert.is(directUrl(pooled, {}), pooled);
  assert.throws(() => directUrl(pooled, { CHATD_DATABASE_POOLER: "transaction" }), /needs CHATD_DIRECT_DATABASE_URL/);
});

test("directUrl in transaction mode: the direct server and database, the pooled login and password", () => {
  const env = { CHATD_DATABASE_POOLER: "transaction", CHATD_DIRECT_DATABASE_URL: "postgres://owner:secret@db.internal:5432/chatd_main" };
  assert.equal(fields(directUrl("postgres://worker:w%40pw@bouncer:6432/chatd", env)),
    { user: "worker", password: "w@pw", host: "db.internal", port: "5432", database: "chatd_main" });
  assert.equal(fields(directUrl("postgres://chatd_api@bouncer:6432/chatd", env)),
    { user: "chatd_api", password: undefined, host: "db.internal", port: "5432", database: "chatd_main" },
    "no password of the owner's stands in for a pooled login without one");
  assert.equal(fields(directUrl("postgres://bouncer:6432/chatd", env)), fields(env.CHATD_DIRECT_DATABASE_URL),
    "a pooled string without a user: the direct one as it is");
});

test.run();
