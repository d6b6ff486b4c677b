// Kill tests with real worker processes (scripted provider, mock hook server: not a real model or integration).
// A worker dies at the named fault point during the hook call, or is killed while a hook call is held; a fresh
// worker recovers the turn. Durable counts decide: exactly one continuation, exactly one receipt, the right one.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { structured } from "../support/chats.ts";
import { type TestDatabase } from "../support/db.ts";
import { createWorkerChat, messages, spawnWorkerProcess, startTestWorker, waitForStatus } from "../support/worker.ts";
import { continueWith, startHookFixture, type HookFixture, type MockHookServer } from "./mock-hook-server.ts";

let db: TestDatabase;
let user: string;
let hook: MockHookServer;
let root: string;
let fixture: HookFixture;

test.before(async () => {
  fixture = await startHookFixture("kills", 2);
  ({ db, user, hook, root } = fixture);
});
test.after(() => fixture.close());
// Each test counts the hook's calls from its own first one, whichever tests ran before it.
test.before.each(() => hook.reset());

const SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
const finalize = (n: string) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":{"n":${n}}}` }] });

async function receipts(chatId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ r: string }>(
    "select structured_output::text as r from chat_public.chat_messages where chat_id = $1 and kind = 'receipt' order by id", [chatId]);
  return rows.map((x) => x.r);
}

async function continuations(chatId: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ n: number }>("select hook_continuations as n from chat_private.turn_progress where chat_id = $1 order by id", [chatId]);
  return rows.map((x) => x.n);
}

test("(scripted, mock hook) kill at during_hook_call: the restarted worker continues once; exactly one receipt, candidate B", async () => {
  hook.replies = [continueWith("check it again")];
  const chat = await createWorkerChat(db, user, JSON.stringify({ script: [finalize("111"), finalize("222")] }),
    { workspace: null, responseFormat: structured("r", SCHEMA) });
  const child = spawnWorkerProcess(db, root, { CHATD_FAULTS: "during_hook_call:exit" });
  assert.is(await child.exited, 137, "the worker died at the fault point");
  assert.is(hook.calls.length, 1);
  assert.equal([await receipts(chat), await continuations(chat)], [[], [0]], "nothing of the hook's answer was committed");
  const worker = await startTestWorker(db, root);
  try {
    await waitForStatus(db, chat, "waiting", 30_000);
  } finally {
    await worker.stop();
  }
  const all = await receipts(chat);
  assert.is(all.length, 1);
  assert.equal(JSON.parse(all[0]!).value, { n: 222 });
  assert.equal(await continuations(chat), [1]);
  assert.is(hook.calls.length, 3, "killed call, continuing call, finishing call");
  assert.ok(hook.calls[1]!.body.includes('"candidate":{"n": 111}') && hook.calls[2]!.body.includes('"candidate":{"n": 222}'));
});

test("(scripted, mock hook) a restart between the two stops: the continuation count holds", async () => {
  hook.replies = [continueWith("more"), { ...continueWith("more again"), hold: true }, continueWith("and more")];
  const chat = await createWorkerChat(db, user, JSON.stringify({ script: [{ text: "one" }, { text: "two" }, { text: "three" }] }), { workspace: null });
  const child = spawnWorkerProcess(db, root);
  await hook.arrived(2);
  child.kill("SIGKILL");
  await child.exited;
  hook.release();
  assert.equal(await continuations(chat), [1], "the first continuation is durable");
  const worker = await startTestWorker(db, root);
  try {
    await waitForStatus(db, chat, "waiting", 30_000);
  } finally {
    await worker.stop();
  }
  assert.equal(await continuations(chat), [1], "the restart did not reset the count: the third answer was not a continuation");
  const answers = (await messages(db, chat)).filter((m) => m.role === "assistant" && m.kind === "message").map((m) => m.content[0]!.text);
  assert.equal(answers, ["one", "two"]);
  assert.is(hook.calls.length, 3);
});

test.run();
