// History fencing: receipts are exempt, everything else fences; receipt shape and immutability;
// revision stamping; clients write nothing directly; one NOTIFY per committed transition.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { sqlState, type TestDatabase } from "../support/db.ts";
import {
  chatDatabase, acquire, assistantText, chatRow, chatRowUpdates, commitCandidate, commitStep, createChat,
  deleteQueued, type Fence, receipts, sendMessage, structured,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  ({ db, user } = await chatDatabase("fencing"));
});
test.after(async () => {
  await db.drop();
});

/** Runs fn as superuser in a transaction that is always rolled back. */
async function rolledBack<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query("begin");
    return await fn(client);
  } finally {
    await client.query("rollback").catch(() => {});
    client.release();
  }
}

async function versions(client: pg.ClientBase, chatId: string) {
  const { rows } = await client.query<{ snapshot_version: string; history_version: string; generation_attempt: string }>(
    "select snapshot_version, history_version, generation_attempt from chat_public.chats where id = $1", [chatId]);
  return rows[0]!;
}

/** A structured chat with a runner (so history_version < snapshot_version and generation_attempt = 1). */
async function structuredRunningChat() {
  const chat = await createChat(db, user, "structured please", structured());
  const fence = await acquire(db, chat.chat_id);
  return { chat, fence, requestId: chat.structured_output_request_id! };
}

const receiptValues = (chatId: string, requestId: string) =>
  `('${chatId}', 'assistant', 'user', 'receipt', '[{"type":"text","text":"done"}]', '${requestId}',
    '{"request_id":"${requestId}","status":"succeeded","value":1}')`;

test("receipt-only insert keeps history_version and generation_attempt, bumps snapshot_version; the runner's fence holds", async () => {
  const running = await createChat(db, user, "long task");
  const fence = await acquire(db, running.chat_id);
  const queued = await sendMessage(db, user, running.chat_id, "then this", structured());
  assert.ok(queued.queued_message_id);
  const before = await chatRow(db, running.chat_id);
  assert.is(String(before.history_version), fence.historyVersion);
  assert.is(String(before.generation_attempt), fence.generationAttempt);

  const deleted = await deleteQueued(db, user, queued.queued_message_id!);
  assert.is(deleted.receipt_message_ids.length, 1);
  const after = await chatRow(db, running.chat_id);
  assert.is(after.history_version, before.history_version, "history_version unchanged");
  assert.is(after.generation_attempt, before.generation_attempt, "generation_attempt unchanged");
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1, "snapshot_version bumped once");
  const [receipt] = await receipts(db, running.chat_id);
  assert.is(receipt?.code, "queue_deleted");

  const next = await commitStep(db, fence, [assistantText("still going")], { steps: 1 });
  assert.is(next.runnerId, fence.runnerId);
  assert.is(await db.pool.query("select 1 from chat_public.chat_messages where chat_id = $1 and role = 'assistant' and kind = 'message'",
    [running.chat_id]).then((r) => r.rowCount), 1);
});

test("a receipt-only INSERT statement does not fence", async () => {
  const { chat, requestId } = await structuredRunningChat();
  await rolledBack(async (client) => {
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    const before = await versions(client, chat.chat_id);
    assert.is.not(before.history_version, before.snapshot_version);
    await client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind, content,
      structured_output_request_id, structured_output) values ${receiptValues(chat.chat_id, requestId)}`);
    const after = await versions(client, chat.chat_id);
    assert.equal(after, before);
  });
});

test("one INSERT statement of a receipt and an ordinary row fences", async () => {
  const { chat, requestId } = await structuredRunningChat();
  await rolledBack(async (client) => {
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    const before = await versions(client, chat.chat_id);
    assert.is(before.generation_attempt, "1");
    await client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind, content,
      structured_output_request_id, structured_output) values ${receiptValues(chat.chat_id, requestId)},
      ('${chat.chat_id}', 'assistant', 'both', 'message', '[{"type":"text","text":"ordinary"}]', null, null)`);
    const after = await versions(client, chat.chat_id);
    assert.is(after.history_version, before.snapshot_version);
    assert.is(after.generation_attempt, "0");
  });
});

test("one INSERT statement of a receipt and a control row fences", async () => {
  const { chat, requestId } = await structuredRunningChat();
  await rolledBack(async (client) => {
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    const before = await versions(client, chat.chat_id);
    await client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind, content,
      structured_output_request_id, structured_output) values ${receiptValues(chat.chat_id, requestId)},
      ('${chat.chat_id}', 'user', 'model', 'control', '[{"type":"text","text":"hook context"}]', null, null)`);
    const after = await versions(client, chat.chat_id);
    assert.is(after.history_version, before.snapshot_version);
    assert.is(after.generation_attempt, "0");
  });
});

test("a receipt without structured_output is refused by the two-way CHECK (23514)", async () => {
  const { chat, requestId } = await structuredRunningChat();
  const state = await rolledBack(async (client) => {
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    return sqlState(client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind, content,
      structured_output_request_id) values ($1, 'assistant', 'user', 'receipt', '[]', $2)`, [chat.chat_id, requestId]));
  });
  assert.is(state, "23514");
});

test("structured_output on a non-receipt is refused by the two-way CHECK (23514)", async () => {
  const { chat, requestId } = await structuredRunningChat();
  const state = await rolledBack((client) => sqlState(client.query(
    `insert into chat_public.chat_messages (chat_id, role, visibility, kind, content, structured_output_request_id,
       structured_output) values ($1, 'assistant', 'user', 'message', '[]', $2, '{"status":"succeeded"}')`,
    [chat.chat_id, requestId])));
  assert.is(state, "23514");
});

test("a receipt with the wrong role or visibility is refused by the CHECK (23514)", async () => {
  const { chat, requestId } = await structuredRunningChat();
  for (const [role, visibility] of [["user", "user"], ["assistant", "both"], ["assistant", "model"]]) {
    const state = await rolledBack(async (client) => {
      await client.query("select set_config('chatd.writing_receipt', 'on', true)");
      return sqlState(client.query(`insert into chat_public.chat_messages (chat_id, role, visibility, kind, content,
        structured_output_request_id, structured_output) values ($1, $2, $3, 'receipt', '[]', $4, '{}')`,
      [chat.chat_id, role, visibility, requestId]));
    });
    assert.is(state, "23514", `${role}/${visibility}`);
  }
});

test("inserting a receipt without the transition flag fails (RCFRB)", async () => {
  const { chat, requestId } = await structuredRunningChat();
  const state = await rolledBack((client) => sqlState(client.query(`insert into chat_public.chat_messages (chat_id, role,
    visibility, kind, content, structured_output_request_id, structured_output) values ${receiptValues(chat.chat_id, requestId)}`)));
  assert.is(state, "RCFRB");
});

test("a worker step cannot insert a receipt (RCFRB)", async () => {
  const { fence } = await structuredRunningChat();
  const state = await sqlState(commitStep(db, fence, [{ role: "assistant", kind: "receipt", visibility: "user", content: [] }]));
  assert.is(state, "RCFRB");
});

test("an ordinary message cannot become a receipt (RCFRB)", async () => {
  const { chat } = await structuredRunningChat();
  const state = await rolledBack(async (client) => {
    await client.query("select set_config('chatd.writing_receipt', 'on', true)");
    return sqlState(client.query("update chat_public.chat_messages set kind = 'receipt' where chat_id = $1", [chat.chat_id]));
  });
  assert.is(state, "RCFRB");
});

/** A committed queue_deleted receipt on a running chat; returns its id. */
async function committedReceipt(): Promise<{ chatId: string; receiptId: string }> {
  const running = await createChat(db, user, "busy");
  await acquire(db, running.chat_id);
  const queued = await sendMessage(db, user, running.chat_id, "queued", structured());
  const deleted = await deleteQueued(db, user, queued.queued_message_id!);
  return { chatId: running.chat_id, receiptId: deleted.receipt_message_ids[0]! };
}

test("updating a receipt's content or identity fails (RCIMM)", async () => {
  const { receiptId } = await committedReceipt();
  const updates = [
    `content = '[{"type":"text","text":"forged"}]'`,
    `structured_output = '{"status":"succeeded","value":2}'`,
    "visibility = 'user', role = 'user'",
    "structured_output_request_id = null",
  ];
  for (const set of updates) {
    const state = await rolledBack((client) => sqlState(client.query(`update chat_public.chat_messages set ${set} where id = $1`, [receiptId])));
    assert.is(state, "RCIMM", set);
  }
});

test("changing compressed or deleted on a receipt is allowed", async () => {
  const { chatId, receiptId } = await committedReceipt();
  await rolledBack(async (client) => {
    const { rowCount } = await client.query("update chat_public.chat_messages set compressed = true, deleted = true where id = $1", [receiptId]);
    assert.is(rowCount, 1);
    const { rows } = await client.query("select compressed, deleted, kind from chat_public.chat_messages where id = $1", [receiptId]);
    assert.equal(rows[0], { compressed: true, deleted: true, kind: "receipt" });
  });
  assert.is((await receipts(db, chatId)).length, 1);
});

test("writing revision manually fails (RVMAN)", async () => {
  const chat = await createChat(db, user, "revision");
  const insert = await rolledBack((client) => sqlState(client.query(
    `insert into chat_public.chat_messages (chat_id, role, content, revision) values ($1, 'assistant', '[]', 5)`, [chat.chat_id])));
  assert.is(insert, "RVMAN");
  const update = await rolledBack((client) => sqlState(client.query(
    "update chat_public.chat_messages set revision = revision + 1 where id = $1", [chat.message_id])));
  assert.is(update, "RVMAN");
});

test("a message cannot move to another chat (MSIMM), even for the owner of every object", async () => {
  const from = await createChat(db, user, "from");
  const to = await createChat(db, user, "to");
  const moved = await rolledBack((client) => sqlState(client.query(
    "update chat_public.chat_messages set chat_id = $2 where id = $1", [from.message_id, to.chat_id])));
  assert.is(moved, "MSIMM");
  const { rows } = await db.pool.query("select chat_id from chat_public.chat_messages where id = $1", [from.message_id]);
  assert.equal(rows[0], { chat_id: from.chat_id });
});

test("revision is stamped with the chat's snapshot_version", async () => {
  const chat = await createChat(db, user, "stamp");
  const fence = await acquire(db, chat.chat_id);
  await commitStep(db, fence, [assistantText("a")]);
  const { rows } = await db.pool.query<{ revision: string; snapshot_version: string }>(
    `select m.revision, c.snapshot_version from chat_public.chat_messages m join chat_public.chats c on c.id = m.chat_id
     where m.chat_id = $1 order by m.id desc limit 1`, [chat.chat_id]);
  assert.is(rows[0]!.revision, rows[0]!.snapshot_version);
});

async function tables(): Promise<{ name: string; column: string }[]> {
  const { rows } = await db.pool.query<{ name: string; column: string }>(
    `select format('%I.%I', n.nspname, c.relname) as name,
            (select attname from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
             order by attnum limit 1) as column
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('chat_public', 'chat_private') and c.relkind in ('r', 'p') order by 1`);
  return rows;
}

test("chat_user cannot INSERT, UPDATE or DELETE any table directly (42501)", async () => {
  const all = await tables();
  assert.ok(all.length >= 14, `found ${all.length} tables`);
  for (const { name, column } of all) {
    for (const sql of [`insert into ${name} default values`, `update ${name} set ${pg.escapeIdentifier(column)} = ${pg.escapeIdentifier(column)}`,
      `delete from ${name}`, `truncate ${name}`]) {
      const state = await sqlState(db.as("chat_user", user, (client) => client.query(sql)));
      assert.is(state, "42501", sql);
    }
  }
});

/** Collects the notifications of one chat's channel on a dedicated connection. */
async function listen(chatId: string) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const received: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  client.on("notification", (message) => {
    received.push(JSON.parse(message.payload ?? "null") as Record<string, unknown>);
    waiters.splice(0).forEach((resolve) => resolve());
  });
  await client.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chatId}`)}`);
  return {
    received,
    /** Resolves once a notification satisfies `match`; rejects after 10 s so a missing one fails instead of hanging. */
    async until(match: (payload: Record<string, unknown>) => boolean) {
      const deadline = Date.now() + 10_000;
      while (!received.some(match)) {
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), client.query("select 1")]);
        if (Date.now() > deadline) throw new Error(`notification not received; got ${JSON.stringify(received)}`);
      }
    },
    end: () => client.end(),
  };
}

test("a committed transition notifies chatd:chat:<id> with its snapshot_version; a rolled-back one does not", async () => {
  const chat = await createChat(db, user, "notify me");
  const listener = await listen(chat.chat_id);
  try {
    await sendMessage(db, user, chat.chat_id, "queued one");
    await listener.until((n) => n.change === "message_sent");
    const afterSend = await chatRow(db, chat.chat_id);
    assert.is(listener.received.length, 1);
    assert.is(String(listener.received[0]!.snapshot_version), String(afterSend.snapshot_version));

    // Rolled back (db.as rolls back unless asked to commit): an interrupt would notify with change "status".
    await db.as("chat_user", user, (client) => client.query("select chat_public.interrupt_chat($1)", [chat.chat_id]));
    assert.is((await chatRow(db, chat.chat_id)).status, "running");
    // Barrier: a later committed transition's notification arrives after any earlier one would have.
    await sendMessage(db, user, chat.chat_id, "queued two");
    await listener.until((n) => n.change === "message_sent" && n !== listener.received[0]);
    const afterSecond = await chatRow(db, chat.chat_id);
    assert.equal(listener.received.map((n) => n.change), ["message_sent", "message_sent"]);
    assert.is(String(listener.received[1]!.snapshot_version), String(afterSecond.snapshot_version));
    assert.is(Number(afterSecond.snapshot_version), Number(afterSend.snapshot_version) + 1);
  } finally {
    await listener.end();
  }
});

const fenceArgs = (fence: Fence) => [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt];

// A step that inserts history bumps the snapshot and moves the fence in one UPDATE (_fence_history with the bump):
// the insert's fencing trigger then finds the fence current and writes nothing.
test("commit_step with history rows writes the chat row once and moves the fence to the new snapshot", async () => {
  const chat = await createChat(db, user, "one version per step");
  const fence = await acquire(db, chat.chat_id);
  const before = await chatRow(db, chat.chat_id);
  const { n, row } = await chatRowUpdates(db, "select * from chat_private.commit_step($1, $2, $3, $4, $5)",
    [...fenceArgs(fence), JSON.stringify([assistantText("a"), assistantText("b")])]);
  assert.is(n, 1);
  const after = await chatRow(db, chat.chat_id);
  assert.is(Number(after.snapshot_version), Number(before.snapshot_version) + 1);
  assert.is(String(after.history_version), String(after.snapshot_version));
  assert.is(Number(after.generation_attempt), 0);
  assert.equal([row.history_version, row.generation_attempt], [String(after.snapshot_version), "0"]);
});

test("commit_step without history rows bumps the snapshot once and leaves the fence", async () => {
  const chat = await createChat(db, user, "progress only");
  const fence = await acquire(db, chat.chat_id);
  const { n, row } = await chatRowUpdates(db, "select * from chat_private.commit_step($1, $2, $3, $4, '[]', '{\"steps\": 1}')",
    fenceArgs(fence));
  assert.is(n, 1);
  assert.equal([row.history_version, row.generation_attempt], [fence.historyVersion, fence.generationAttempt]);
});

test("the fused final commit writes the chat row twice: the step, then the finish", async () => {
  const chat = await createChat(db, user, "fused", structured());
  const fence = await commitCandidate(db, await acquire(db, chat.chat_id), '{"ok": true}');
  const { n, row } = await chatRowUpdates(db,
    "select * from chat_private.commit_step_and_finish_turn($1, $2, $3, $4, $5, '{}')",
    [...fenceArgs(fence), JSON.stringify([assistantText("done")])]);
  assert.is(n, 2);
  assert.is(row.status, "waiting");
});

test.run();
