// Stop hooks end to end (scripted provider, mock hook server on 127.0.0.1: deterministic, not a real model or a
// real integration): signed payloads, one continuation per user request, the structured candidate interplay,
// fail-closed errors, and the JSON safety boundary on answers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, messages, startTestWorker, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { addStopHook, continueWith, HOOK_SECRET, removeStopHooks, startHookServer, type MockHookServer, type Reply } from "./mock-hook-server.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;
let hook: MockHookServer;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "hooks");
});
test.after(async () => {
  await worker.stop();
  await hook?.close();
  await db.drop();
});

async function withHook(replies: Reply[], timeoutMs?: number): Promise<void> {
  await hook?.close();
  await removeStopHooks(db);
  hook = await startHookServer(replies);
  await addStopHook(db, hook.url, timeoutMs != null ? { timeoutMs } : {});
}

const script = (steps: object[]) => JSON.stringify({ script: steps });
const finalize = (argsRaw: string) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: argsRaw }] });
const SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };

async function progress(chatId: string): Promise<{ steps: number; hook_continuations: number; invalidations: number; rejected_batches: number }> {
  const { rows } = await db.pool.query<{ steps: number; hook_continuations: number; invalidations: number; rejected_batches: number }>(
    "select steps, hook_continuations, invalidations, rejected_batches from chat_private.turn_progress where chat_id = $1 order by id limit 1", [chatId]);
  return rows[0]!;
}

async function chatError(chatId: string): Promise<{ status: string; last_error: { kind: string; message: string } | null }> {
  const { rows } = await db.pool.query<{ status: string; last_error: { kind: string; message: string } | null }>(
    "select status::text, last_error from chat_public.chats where id = $1", [chatId]);
  return rows[0]!;
}

async function receipts(chatId: string): Promise<{ status: string; code: string | null; value: string | null }[]> {
  const { rows } = await db.pool.query<{ status: string; code: string | null; value: string | null }>(
    `select m.structured_output ->> 'status' as status, m.structured_output -> 'error' ->> 'code' as code,
            (m.structured_output -> 'value')::text as value
     from chat_public.chat_messages m where m.chat_id = $1 and m.kind = 'receipt' order by m.id`, [chatId]);
  return rows;
}

test("(scripted, mock hook) a continuing hook continues the turn once; the second stop finishes", async () => {
  await withHook([continueWith("Also mention the tests.", "A reviewer hook asked for more."), continueWith("Again!")]);
  const chat = await createWorkerChat(db, user, script([{ text: "first answer" }, { text: "second answer" }]), { workspace: null });
  await waitForStatus(db, chat, "waiting");
  assert.is(hook.calls.length, 2, "the hooks ran at both stops");
  assert.ok(hook.calls.every((c) => c.verified), "every request carries a valid HMAC-SHA256 signature over the exact body");
  const first = hook.calls[0]!.payload as { type: string; chat_id: string; turn: { steps: number; hook_continuations: number }; structured_output: unknown; last_assistant_text: string };
  assert.equal([first.type, first.chat_id, first.turn.steps, first.turn.hook_continuations, first.structured_output, first.last_assistant_text],
    ["stop", chat, 1, 0, null, "first answer"]);
  assert.is((hook.calls[1]!.payload as { turn: { hook_continuations: number } }).turn.hook_continuations, 1);
  const rows = await messages(db, chat);
  const controls = rows.filter((m) => m.kind === "control");
  assert.equal(controls.map((m) => [m.role, m.visibility]), [["user", "model"], ["assistant", "user"]],
    "a model-only context row and a user-visible notice");
  assert.ok(String(controls[0]!.content[0]!.text).startsWith("[chatd] ") && String(controls[0]!.content[0]!.text).includes("Also mention the tests."));
  assert.is(controls[1]!.content[0]!.text, "A reviewer hook asked for more.");
  assert.equal(rows.filter((m) => m.role === "assistant" && m.kind === "message").map((m) => m.content[0]!.text), ["first answer", "second answer"]);
  const p = await progress(chat);
  assert.equal([p.hook_continuations, p.steps], [1, 2], "the second continuation request was ignored; the count is durable");
});

test("(scripted, mock hook) the secret and the answer body never reach the chat or its error", async () => {
  await withHook([{ status: 500, body: JSON.stringify({ leaked: HOOK_SECRET }) }]);
  const chat = await createWorkerChat(db, user, script([{ text: "done" }]), { workspace: null });
  await waitForStatus(db, chat, "error");
  const { last_error } = await chatError(chat);
  assert.is(last_error!.kind, "hook_failed");
  assert.match(last_error!.message, /HTTP 500/);
  const { rows } = await db.pool.query<{ n: number }>(
    "select count(*)::int as n from chat_public.chat_messages where chat_id = $1 and content::text like '%' || $2 || '%'", [chat, HOOK_SECRET]);
  assert.is(rows[0]!.n, 0);
  assert.not.match(JSON.stringify(last_error), HOOK_SECRET);
});

test("(scripted, mock hook) a timeout fails the turn closed; a structured request gets generation_failed", async () => {
  await withHook([{ hold: true }], 200);
  const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":1}}')]), { workspace: null, responseFormat: structured("r", SCHEMA) });
  await waitForStatus(db, chat, "error");
  hook.release();
  const { last_error } = await chatError(chat);
  assert.equal([last_error!.kind, /timed out after 200 ms/.test(last_error!.message)], ["hook_failed", true]);
  assert.equal(await receipts(chat), [{ status: "failed", code: "generation_failed", value: null }]);
});

for (const [name, body, rule] of [
  ["duplicate keys", '{"model_context":"a","model_context":"b"}', /not safe JSON \(duplicate-key\)/],
  ["a non-object", "[1,2]", /not a JSON object/],
  ["a non-string model_context", '{"model_context":{"x":1}}', /model_context must be a string/],
] as const) {
  test(`(scripted, mock hook) an answer with ${name} fails closed at the JSON safety boundary`, async () => {
    await withHook([{ status: 200, body }]);
    const chat = await createWorkerChat(db, user, script([{ text: "done" }]), { workspace: null });
    await waitForStatus(db, chat, "error");
    const { last_error } = await chatError(chat);
    assert.is(last_error!.kind, "hook_failed");
    assert.match(last_error!.message, rule);
  });
}

test("(scripted, mock hook) a blank model_context and an empty body finish the turn", async () => {
  await withHook([{ status: 200, body: '{"model_context":"   "}' }, { status: 204, body: "" }]);
  const a = await createWorkerChat(db, user, script([{ text: "one" }]), { workspace: null });
  await waitForStatus(db, a, "waiting");
  const b = await createWorkerChat(db, user, script([{ text: "two" }]), { workspace: null });
  await waitForStatus(db, b, "waiting");
  assert.equal([(await progress(a)).hook_continuations, (await progress(b)).hook_continuations], [0, 0]);
});

test("(scripted, mock hook) structured: candidate A, continue, candidate B — only B is public, exactly one receipt", async () => {
  await withHook([continueWith("Double-check the number.")]);
  const chat = await createWorkerChat(db, user, script([finalize('{"output":{"n":12345678901234567890}}'), finalize('{"output":{"n":2}}')]),
    { workspace: null, responseFormat: structured("r", SCHEMA) });
  await waitForStatus(db, chat, "waiting");
  assert.equal(await receipts(chat), [{ status: "succeeded", code: null, value: '{"n": 2}' }]);
  assert.is(hook.calls.length, 2);
  const { rows } = await db.pool.query<{ id: string }>("select id from chat_public.structured_output_requests where chat_id = $1", [chat]);
  const first = hook.calls[0]!;
  assert.ok(first.body.includes(`"structured_output":{"request_id":"${rows[0]!.id}","candidate":{"n": 12345678901234567890}}`),
    "the candidate is the exact stored JSON text (no float64 round trip)");
  assert.ok(hook.calls[1]!.body.includes('"candidate":{"n": 2}'));
  const p = await progress(chat);
  assert.equal([p.hook_continuations, p.invalidations, p.steps, p.rejected_batches], [1, 1, 2, 0]);
  const control = (await messages(db, chat)).find((m) => m.kind === "control")!;
  assert.match(String(control.content[0]!.text), /call coder_structured_output again/);
});

test("(scripted, mock hook) disabled hooks are not called", async () => {
  await withHook([continueWith("never")]);
  await db.pool.query("update chat_private.stop_hooks set enabled = false");
  const chat = await createWorkerChat(db, user, script([{ text: "plain" }]), { workspace: null });
  await waitForStatus(db, chat, "waiting");
  assert.is(hook.calls.length, 0);
});

test("operators read hook configuration but never secrets", async () => {
  await withHook([{}]);
  const names = await db.as("chat_operator", null, async (c) => (await c.query("select name from chat_private.stop_hooks")).rows.length);
  assert.is(names, 1);
  const denied = await db.as("chat_operator", null, (c) => c.query("select secret from chat_private.stop_hook_secrets"))
    .then(() => "read", (e: { code?: string }) => e.code);
  assert.is(denied, "42501");
  const worker = await db.as("chat_worker", null, async (c) => (await c.query("select secret from chat_private.stop_hook_secrets")).rows.length);
  assert.is(worker, 1);
});

test.run();
