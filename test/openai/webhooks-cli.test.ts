// `chatd webhooks` as an operator runs it: add prints the secret on its last line (and nothing lists it again),
// rotate prints a new one and keeps the old one signing, remove deletes, bad input is a clear refusal (exit 2).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runChatd } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after(() => db.drop());

test("add, list, rotate, remove; refusals exit 2 with a message", async () => {
  const added = await runChatd(["webhooks", "add", "--user", "dana", "--url", "https://example.com/hook", "--events", "response.completed,batch.failed"], db.url);
  assert.is(added.code, 0, added.out);
  const lines = added.out.trim().split("\n");
  const secret = lines.at(-1)!;
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const id = /endpoint ([0-9a-f-]{36})/.exec(added.out)![1]!;
  const { rows } = await db.pool.query("select events, secret from chat_private.webhook_endpoints where id = $1", [id]);
  assert.equal(rows[0].events, ["response.completed", "batch.failed"]);
  assert.is(rows[0].secret, secret);
  const listed = await runChatd(["webhooks", "list", "--user", "dana"], db.url);
  assert.is(listed.code, 0, listed.out);
  assert.ok(listed.out.includes(id));
  assert.not.ok(listed.out.includes("whsec_"));
  const rotated = await runChatd(["webhooks", "rotate", id, "--overlap-hours", "2"], db.url);
  assert.is(rotated.code, 0, rotated.out);
  const fresh = rotated.out.trim().split("\n").at(-1)!;
  const after = await db.pool.query("select secret, previous_secret, previous_secret_expires_at > now() + interval '119 minutes' as overlap from chat_private.webhook_endpoints where id = $1", [id]);
  assert.equal(after.rows[0], { secret: fresh, previous_secret: secret, overlap: true });
  const removed = await runChatd(["webhooks", "remove", id], db.url);
  assert.is(removed.code, 0, removed.out);
  assert.is((await db.pool.query("select 1 from chat_private.webhook_endpoints where id = $1", [id])).rowCount, 0);
  for (const [args, message] of [
    [["webhooks", "add", "--user", "dana", "--url", "nope"], "--url must be an absolute http(s) URL"],
    [["webhooks", "remove", id], `no endpoint ${id}`],
  ] as const) {
    const refused = await runChatd([...args], db.url);
    assert.is(refused.code, 2, refused.out);
    assert.ok(refused.out.includes(message), refused.out);
  }
});

test.run();
