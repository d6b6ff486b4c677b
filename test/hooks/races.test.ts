// Fences while a stop hook is awaited (scripted provider, mock hook server: not a real model or integration). The
// runner is driven directly (no background worker), the hook call is held on a barrier, and the chat moves on
// under it: an edit, or a second runner taking the lease. Released, the stale runner must write nothing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, editMessage, structured } from "../support/chats.ts";
import { type TestDatabase } from "../support/db.ts";
import { createWorkerChat, makeDeps } from "../support/worker.ts";
import { runChat } from "../../worker/chat-run.ts";
import { continueWith, startHookFixture, type HookFixture, type MockHookServer } from "./mock-hook-server.ts";

let db: TestDatabase;
let user: string;
let hook: MockHookServer;
let root: string;
let fixture: HookFixture;

test.before(async () => {
  fixture = await startHookFixture("races", 30);
  ({ db, user, hook, root } = fixture);
});
test.after(() => fixture.close());

const SCHEMA = { type: "object", properties: { n: { type: "integer" } } };
const candidateScript = JSON.stringify({ script: [{ tool_calls: [{ name: "coder_structured_output", args_raw: '{"output":{"n":1}}' }] }] });

async function snapshot(chatId: string): Promise<string> {
  const { rows } = await db.pool.query<{ s: string }>(
    `select json_build_object(
       'messages', (select json_agg(json_build_array(id, role, kind, visibility, deleted, content) order by id) from chat_public.chat_messages where chat_id = $1),
       'turns', (select json_agg(json_build_array(id, steps, hook_continuations, invalidations, candidate_present, finished_at is null) order by id)
                 from chat_private.turn_progress where chat_id = $1),
       'requests', (select json_agg(json_build_array(id, status, error_code) order by created_at) from chat_public.structured_output_requests where chat_id = $1))::text as s`,
    [chatId]);
  return rows[0]!.s;
}

test("(scripted, mock hook) an edit while the hook is awaited: the released stale runner writes nothing", async () => {
  hook.replies = [{ ...continueWith("continue please"), hold: true }];
  const chat = await createWorkerChat(db, user, candidateScript, { workspace: null, responseFormat: structured("r", SCHEMA) });
  const { rows } = await db.pool.query<{ id: string }>("select id from chat_public.chat_messages where chat_id = $1 and role = 'user' order by id limit 1", [chat]);
  const deps = makeDeps(db, root, "race-worker");
  const running = runChat(deps, chat);
  const before = hook.calls.length;
  await hook.arrived(before + 1);
  const edited = await editMessage(db, user, rows[0]!.id, "replacement");
  assert.is(edited.receipt_message_ids.length, 1, "the edit superseded the pending request");
  const afterEdit = await snapshot(chat);
  hook.release();
  assert.equal(await running, ["lost"]);
  assert.is(await snapshot(chat), afterEdit, "no row, receipt or counter was written by the stale runner");
  assert.is(JSON.parse(afterEdit).turns[0][2], 0, "the old turn never counted a continuation");
  await deps.close();
});

test("(scripted, mock hook) a second runner takes the lease while the hook is awaited: the first writes nothing", async () => {
  hook.replies = [{ status: 200, body: "{}", hold: true }];
  const chat = await createWorkerChat(db, user, candidateScript, { workspace: null, responseFormat: structured("r", SCHEMA) });
  const deps = makeDeps(db, root, "race-worker");
  const running = runChat(deps, chat);
  const before = hook.calls.length;
  await hook.arrived(before + 1);
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '1 second' where chat_id = $1", [chat]);
  await acquire(db, chat, "second-runner");
  const taken = await snapshot(chat);
  hook.release();
  assert.equal(await running, ["lost"]);
  assert.is(await snapshot(chat), taken, "the stale runner's finish_turn was fenced out: no receipt, the turn stays open");
  const state = JSON.parse(taken) as { requests: [string, string, string | null][]; turns: unknown[][] };
  assert.equal(state.requests[0]!.slice(1), ["pending", null]);
  assert.is(state.turns[0]![4], true, "the candidate is still there for the new runner");
  await deps.close();
});

test.run();
