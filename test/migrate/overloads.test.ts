// Signature changes are explicit: a chatd schema has no overloaded function that is not on the allow-list.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { chatdOverloads } from "./overloads.ts";

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after(() => db.drop());

test("a fresh install has no overloaded functions outside the allow-list", async () => {
  assert.equal(await chatdOverloads(db.pool), []);
});

test("an old signature left behind by create or replace is reported", async () => {
  // What sql/070 alone did before a migration dropped it: commit_step gained p_deltas, the old one stayed.
  await db.pool.query(`create function chat_private.commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb)
    returns chat_private.fence language sql as 'select null::chat_private.fence'`);
  assert.equal(await chatdOverloads(db.pool), [
    "chat_private.commit_step(uuid,uuid,bigint,bigint,jsonb,jsonb)",
    "chat_private.commit_step(uuid,uuid,bigint,bigint,jsonb,jsonb,text[])",
  ]);
});

test.run();
