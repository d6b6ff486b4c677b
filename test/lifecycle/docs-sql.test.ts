// Every SQL snippet of docs/operations.md "Deleting data and retention" runs, and the verification queries say what
// the section says: rows before a delete, none after (for a chat, and for a user).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createChat, createUser, sendMessage, setStructuredExperiment, structured } from "../support/chats.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
});
test.after(async () => {
  await db.drop();
});

/** The section's SQL statements, in order. */
function snippets(): string[] {
  const doc = readFileSync(join(projectRoot, "docs", "operations.md"), "utf8");
  const start = doc.indexOf("## Deleting data and retention");
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((block) => block.split(/;\s*\n/)).map((s) => s.trim()).filter((s) => s.replace(/^--.*$/gm, "").trim() !== "");
}

type Row = Record<string, unknown>;

async function runAll(ids: { chat: string; request: string; user: string }): Promise<Row[][]> {
  const results: Row[][] = [];
  for (const sql of snippets()) {
    const text = sql.replaceAll("<chat id>", ids.chat).replaceAll("<request id>", ids.request).replaceAll("<user id>", ids.user);
    results.push((await db.pool.query(text)).rows as Row[]);
  }
  return results;
}

test("the section's snippets run; its checks find the chat and the user before the delete and nothing after", async () => {
  assert.ok(snippets().length >= 8, `found ${snippets().length} statements`);
  const user = await createUser(db, "documented");
  await db.pool.query("select chat_private.webhook_add($1, 'https://receiver.example/doc', null, $2)",
    [user, `whsec_${Buffer.alloc(32, 9).toString("base64")}`]);
  const chat = await createChat(db, user, "hello", structured(), { idempotencyKey: "doc-key" });
  await sendMessage(db, user, chat.chat_id, "more", structured("second"));
  const ids = { chat: chat.chat_id, request: chat.structured_output_request_id!, user };

  const before = await runAll(ids);
  const columns = before.find((rows) => rows.some((r) => r.column === "chat_public.chat_messages.chat_id"))!;
  assert.ok(columns.some((r) => r.column === "chat_private.openai_responses.chat_id"), "the catalog query covers a table added later");
  const counted = (rows: Row[]) => rows.filter((r) => Number(r.rows ?? r.count ?? 0) > 0).map((r) => r.column ?? r["?column?"]);
  assert.equal(counted(columns).sort(), ["chat_private.turn_progress.chat_id", "chat_public.chat_messages.chat_id",
    "chat_public.chat_queued_messages.chat_id", "chat_public.chats.id", "chat_public.structured_output_requests.chat_id"]);
  const userRow = before.find((rows) => rows[0] != null && "webhook_endpoints" in rows[0])![0]!;
  assert.equal([userRow.users, userRow.chats, userRow.webhook_endpoints].map(Number), [1, 1, 1]);

  await db.as("chat_operator", null, (c) => c.query("select chat_private.operator_delete_user($1)", [user]), true);
  const after = await runAll(ids);
  for (const rows of after) {
    for (const row of rows) {
      for (const [key, value] of Object.entries(row)) {
        if (["rows", "count", "users", "chats", "batches", "keys", "deleted_request_ids", "webhook_endpoints", "responses"].includes(key)) {
          assert.is(Number(value), 0, `${JSON.stringify(row)} after the delete`);
        }
      }
    }
  }
  await db.pool.query("update chat_private.settings set value = '0' where name = 'retention_archived_chat_days'");
});

test.run();
