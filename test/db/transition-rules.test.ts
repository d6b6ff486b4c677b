// Every row of chat_private.transition_rules, read at runtime: a chat is built in the row's state, the transition is
// called with valid arguments, allowed rows must succeed and reach the row's first to_state (the usual target; the
// drivers use plain arguments and no queue unless the transition needs one), forbidden rows must raise CHTRN (CHARC
// for archived) and change nothing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import {
  acquire, archiveChat, asUser, chatRow, chatStatus, createChat, createUser, dynamicTool, type Fence, finishError, finishTurn,
  plantLease, requiresActionChat, sendMessage, text,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "rules");
});
test.after(async () => {
  await db.drop();
});

const STATES = ["waiting", "running", "interrupting", "requires_action", "error", "archived"] as const;
type State = (typeof STATES)[number];

interface Built {
  chatId: string;
  messageId: string;
  queuedId: string | null;
}

async function plantQueued(chatId: string): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    "insert into chat_public.chat_queued_messages (chat_id, content, created_by) values ($1, $2, $3) returning id",
    [chatId, text("planted in the queue"), user]);
  return rows[0]!.id;
}

/** A chat (declaring the dynamic tool `lookup`) in `state`, optionally with one queued message. */
async function build(state: State, withQueue: boolean): Promise<Built> {
  if (state === "requires_action") {
    const chat = await requiresActionChat(db, user);
    const queuedId = withQueue ? (await sendMessage(db, user, chat.chat_id, "queued")).queued_message_id : null;
    return { chatId: chat.chat_id, messageId: chat.message_id!, queuedId };
  }
  const chat = await createChat(db, user, `a chat that will be ${state}`, null, { dynamicTools: [dynamicTool("lookup")] });
  const chatId = chat.chat_id;
  let queuedId: string | null = null;
  if (state === "running" || state === "interrupting" || state === "error") {
    if (withQueue) queuedId = (await sendMessage(db, user, chatId, "queued")).queued_message_id;
    if (state === "interrupting") await asUser(db, user, (c) => c.query("select chat_public.interrupt_chat($1)", [chatId]));
    if (state === "error") await finishError(db, await acquire(db, chatId));
  } else {
    await finishTurn(db, await acquire(db, chatId));
    // No client transition leaves a queue behind on a waiting chat; plant one for delete/promote.
    if (withQueue) queuedId = await plantQueued(chatId);
    if (state === "archived") await archiveChat(db, user, chatId);
  }
  assert.is(await chatStatus(db, chatId), state, "fixture state");
  return { chatId, messageId: chat.message_id!, queuedId };
}

const fenceArgs = (f: Fence) => [f.chatId, f.runnerId, f.historyVersion, f.generationAttempt];
const asClient = (sql: string, params: unknown[]) => asUser(db, user, (c) => c.query(sql, params));

/** Valid arguments for each transition in each state; returns the promise of the call. */
const drivers: Record<string, { queue?: boolean; call: (chat: Built, state: State) => Promise<unknown> }> = {
  send_message: { call: (c) => asClient("select chat_public.send_chat_message($1, $2)", [c.chatId, text("new")]) },
  edit_message: { call: (c) => asClient("select chat_public.edit_chat_message($1, $2)", [c.messageId, text("edited")]) },
  delete_queued_message: { queue: true, call: (c) => asClient("select chat_public.delete_queued_message($1)", [c.queuedId]) },
  promote_queued_message: { queue: true, call: (c) => asClient("select chat_public.promote_queued_message($1)", [c.queuedId]) },
  interrupt: { call: (c) => asClient("select chat_public.interrupt_chat($1)", [c.chatId]) },
  submit_tool_results: {
    call: (c, state) => asClient("select chat_public.submit_tool_results($1, $2)",
      [c.chatId, JSON.stringify(state === "requires_action" ? [{ tool_call_id: "call-1", result: { ok: true } }] : [])]),
  },
  archive: { call: (c) => asClient("select chat_public.archive_chat($1, true)", [c.chatId]) },
  unarchive: { call: (c) => asClient("select chat_public.archive_chat($1, false)", [c.chatId]) },
  set_plan_mode: { call: (c) => asClient("select chat_public.set_chat_plan_mode($1, true)", [c.chatId]) },
  set_mcp_servers: { call: (c) => asClient("select chat_public.set_chat_mcp_servers($1, $2)", [c.chatId, []]) },
  acquire_lease: { call: (c) => acquire(db, c.chatId) },
  commit_step: {
    call: async (c) => db.pool.query("select chat_private.commit_step($1, $2, $3, $4, $5)",
      [...fenceArgs(await plantLease(db, c.chatId)), JSON.stringify([{ role: "assistant", content: [{ type: "text", text: "step" }] }])]),
  },
  enter_requires_action: {
    call: async (c) => db.pool.query("select chat_private.enter_requires_action($1, $2, $3, $4, $5)",
      [...fenceArgs(await plantLease(db, c.chatId)), JSON.stringify([{ tool_call_id: "call-9", tool_name: "lookup" }])]),
  },
  finish_turn: { call: async (c) => finishTurn(db, await plantLease(db, c.chatId)) },
  finish_error: { call: async (c) => finishError(db, await plantLease(db, c.chatId)) },
  finish_interruption: {
    call: async (c) => db.pool.query("select chat_private.finish_interruption($1, $2, $3, $4)", fenceArgs(await plantLease(db, c.chatId))),
  },
  record_retry_state: {
    call: async (c) => db.pool.query("select chat_private.record_retry_state($1, $2, $3, $4, $5)",
      [...fenceArgs(await plantLease(db, c.chatId)), JSON.stringify({ attempt: 2, max_attempts: 5, error: { kind: "network" } })]),
  },
  operator_release_lease: { call: (c) => db.pool.query("select chat_private.operator_release_lease($1)", [c.chatId]) },
  operator_cancel_request: {
    call: async (c) => {
      // A pending request outside the open turn: the transition's state rule is what is under test here.
      const { rows } = await db.pool.query<{ id: string }>(
        `insert into chat_public.structured_output_requests (chat_id, name, schema, schema_sha256)
         values ($1, 'r', '{}', repeat('0', 64)) returning id`, [c.chatId]);
      return db.pool.query("select chat_private.operator_cancel_request($1, 'test')", [rows[0]!.id]);
    },
  },
  compact_chat: { call: (c) => asClient("select chat_public.compact_chat($1)", [c.chatId]) },
  compact_history: {
    call: async (c) => db.pool.query("select chat_private.compact_history($1, $2, $3, $4, $5, $6, $7)",
      [...fenceArgs(await plantLease(db, c.chatId)), "[chatd] summary", c.messageId, "Earlier messages were summarized."]),
  },
  operator_retry_chat: { call: (c) => db.pool.query("select chat_private.operator_retry_chat($1)", [c.chatId]) },
  cancel_requires_action: {
    call: async (c, state) => {
      // The deadline job runs after the deadline: back-date it rather than wait.
      if (state === "requires_action") {
        await db.pool.query("update chat_public.chats set requires_action_deadline_at = now() - interval '1 second' where id = $1", [c.chatId]);
      }
      const { rows } = await db.pool.query<{ done: boolean }>("select chat_private.cancel_requires_action($1) as done", [c.chatId]);
      assert.is(rows[0]!.done, true, "cancel_requires_action did its work");
    },
  },
};

interface Rule { transition: string; from_state: State; allowed: boolean; to_state: State[]; note: string }

async function rules(transition?: string): Promise<Rule[]> {
  const { rows } = await db.pool.query<Rule>(
    `select transition, from_state, allowed, to_state, note from chat_private.transition_rules
     where $1::text is null or transition = $1 order by transition, from_state`,
    [transition ?? null]);
  return rows;
}

test("the rule table has one row per driven transition and state, and nothing else", async () => {
  const all = await rules();
  const transitions = [...new Set(all.map((r) => r.transition))].sort();
  assert.equal(transitions, Object.keys(drivers).sort());
  for (const transition of transitions) {
    assert.equal(all.filter((r) => r.transition === transition).map((r) => r.from_state).sort(), [...STATES].sort(), transition);
  }
  // A row is allowed exactly when it names a state to go to, and it names only states.
  for (const r of all) {
    assert.is(r.allowed, r.to_state.length > 0, `${r.transition}/${r.from_state}`);
    for (const state of r.to_state) assert.ok((STATES as readonly string[]).includes(state), `${r.transition}/${r.from_state}: ${state}`);
  }
});

test("an unknown transition name is an internal error (XX000)", async () => {
  const chat = await build("running", false);
  assert.is(await sqlState(db.pool.query("select chat_private._begin_transition($1, 'no_such_transition')", [chat.chatId])), "XX000");
});

test("the functions read to_state: a rule's only target is where they go, a target they choose must be listed", async () => {
  const setTargets = (transition: string, from: State, targets: string[]) => db.pool.query(
    "update chat_private.transition_rules set to_state = $3 where transition = $1 and from_state = $2", [transition, from, targets]);
  const interrupted = await build("running", false);
  const finished = await build("running", true);
  await setTargets("interrupt", "running", ["error"]);
  await setTargets("finish_turn", "running", ["waiting"]);
  try {
    await drivers.interrupt!.call(interrupted, "running");
    assert.is(await chatStatus(db, interrupted.chatId), "error", "interrupt follows its rule's only target");
    // The queued message makes finish_turn choose running, which the rule no longer lists.
    assert.is(await sqlState(drivers.finish_turn!.call(finished, "running")), "XX000");
    assert.is(await chatStatus(db, finished.chatId), "running");
  } finally {
    await setTargets("interrupt", "running", ["interrupting"]);
    await setTargets("finish_turn", "running", ["waiting", "running"]);
  }
});

for (const transition of Object.keys(drivers)) {
  test(`transition rules: ${transition} — allowed rows succeed, forbidden rows raise CHTRN/CHARC`, async () => {
    const driver = drivers[transition]!;
    const rows = await rules(transition);
    assert.is(rows.length, STATES.length);
    for (const rule of rows) {
      const chat = await build(rule.from_state, driver.queue ?? false);
      const label = `${transition} from ${rule.from_state}`;
      if (rule.allowed) {
        await driver.call(chat, rule.from_state).catch((error: Error & { code?: string }) => {
          assert.unreachable(`${label} should be allowed, got ${error.code}: ${error.message}`);
        });
        assert.is(await chatStatus(db, chat.chatId), rule.to_state[0], `${label}: ${rule.note}`);
      } else {
        const before = await chatRow(db, chat.chatId);
        const state = await sqlState(driver.call(chat, rule.from_state));
        assert.is(state, rule.from_state === "archived" ? "CHARC" : "CHTRN", label);
        const after = await chatRow(db, chat.chatId);
        assert.is(after.snapshot_version, before.snapshot_version, `${label} changed nothing`);
        assert.is(after.status, before.status);
      }
    }
  });
}

test.run();
