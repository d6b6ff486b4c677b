// Compaction end to end (scripted provider in its deterministic summary mode, mock hook server: not a real model).
// Automatic compaction during a long run, budgets and counters across it, the structured candidate with a hook
// continuation across it, and manual compaction by the client mutation.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, sendMessage, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, startTestWorker, waitFor, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { addStopHook, continueWith, removeStopHooks, startHookServer } from "../hooks/mock-hook-server.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  // Scripted configs with tiny context limits, so that real compaction thresholds are reached by short scripts.
  await addModelConfig(db, "scripted-small", "scripted", null, "scripted");
  await db.pool.query("update chat_private.model_configs set context_limit = 1000, compaction_threshold_percent = 30 where id = 'scripted-small'");
  await addModelConfig(db, "scripted-every-step", "scripted", null, "scripted");
  await db.pool.query("update chat_private.model_configs set context_limit = 1000, compaction_threshold_percent = 1 where id = 'scripted-every-step'");
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "compaction");
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

interface Row { id: string; role: string; kind: string; visibility: string; compressed: boolean; text: string | null; input_tokens: number | null }

async function rows(chatId: string): Promise<Row[]> {
  const { rows: r } = await db.pool.query<Row>(
    `select id, role::text, kind::text, visibility::text, compressed, content -> 0 ->> 'text' as text,
            (usage ->> 'inputTokens')::int as input_tokens
     from chat_public.chat_messages where chat_id = $1 and not deleted order by id`, [chatId]);
  return r;
}

async function progress(chatId: string): Promise<{ steps: number; rejected_batches: number; hook_continuations: number; input_message_id: string }> {
  const { rows: r } = await db.pool.query<{ steps: number; rejected_batches: number; hook_continuations: number; input_message_id: string }>(
    "select steps, rejected_batches, hook_continuations, input_message_id from chat_private.turn_progress where chat_id = $1 order by id limit 1", [chatId]);
  return r[0]!;
}

const script = (steps: object[]) => JSON.stringify({ script: steps });
const read = { tool_calls: [{ name: "read_file", args: { path: "a.txt" } }] };

test("(scripted) compaction during a long run: the prompt shrinks, every original row stays, counters hold, the run completes", async () => {
  const steps = [read, read, read, read, read, read, { text: "all files read" }];
  const chat = await createWorkerChat(db, user, script(steps), { model: "scripted-small" });
  await waitForStatus(db, chat, "waiting");
  const all = await rows(chat);
  const summaries = all.filter((r) => r.kind === "summary" && r.visibility === "model");
  const markers = all.filter((r) => r.kind === "summary" && r.visibility === "user");
  assert.ok(summaries.length >= 1, "at least one compaction happened");
  assert.is(markers.length, summaries.length, "each compaction left a client-visible marker");
  assert.ok(summaries.every((s) => s.role === "user" && s.text!.startsWith("[chatd] Summary of the earlier conversation")));
  const assistants = all.filter((r) => r.role === "assistant" && r.kind === "message");
  assert.is(assistants.length, steps.length, "every step's row is still in the transcript");
  assert.is(assistants.at(-1)!.text, "all files read", "the script resumed at the right step and completed");
  assert.equal(all.filter((r) => r.role === "tool").length, 6, "every tool result is still in the transcript");
  // The step right after the first compaction sent a smaller prompt than the step before it.
  const firstSummary = BigInt(summaries[0]!.id);
  const before = assistants.filter((a) => BigInt(a.id) < firstSummary).at(-1)!;
  const after = assistants.find((a) => BigInt(a.id) > firstSummary)!;
  assert.ok(after.input_tokens! < before.input_tokens!, `prompt shrank: ${before.input_tokens} → ${after.input_tokens}`);
  assert.ok(all.filter((r) => BigInt(r.id) < firstSummary).every((r) => r.compressed), "the originals are marked compressed");
  const p = await progress(chat);
  assert.is(p.steps, steps.length, "turn_progress counts every step across compaction");
  assert.is(p.input_message_id, all[0]!.id, "the turn still names its original (compressed) input");
  const copies = all.filter((r) => r.role === "user" && r.kind === "message" && r.visibility === "model");
  assert.ok(copies.length >= 1 && copies.every((c) => c.text === all[0]!.text), "the turn's input was carried over verbatim");
});

test("(scripted) budgets survive compaction: two rejections, compaction, one more rejection fails the request", async () => {
  const chat = await createWorkerChat(db, user, script([{ text: "no" }, { text: "still no" }, { text: "never" }]),
    { model: "scripted-every-step", workspace: null, responseFormat: structured("r", { type: "object" }) });
  await waitForStatus(db, chat, "waiting");
  const all = await rows(chat);
  assert.ok(all.filter((r) => r.kind === "summary" && r.visibility === "model").length >= 2, "compacted before each later step");
  const receipt = all.filter((r) => r.kind === "receipt");
  assert.is(receipt.length, 1);
  const { rows: r } = await db.pool.query<{ code: string }>("select error_code as code from chat_public.structured_output_requests where chat_id = $1", [chat]);
  assert.is(r[0]!.code, "not_produced");
  assert.ok(!receipt[0]!.compressed, "receipts are never compressed");
  const p = await progress(chat);
  assert.equal([p.rejected_batches, p.steps], [3, 3], "the rejection budget and the step count survived compaction");
  assert.equal(all.filter((r) => r.role === "assistant" && r.kind === "message").map((x) => x.text), ["no", "still no", "never"]);
});

test("(scripted, mock hook) candidate A, hook continues, compaction, candidate B: only B is public, one receipt", async () => {
  const hook = await startHookServer([continueWith("Recheck the value.")]);
  await addStopHook(db, hook.url);
  try {
    const finalize = (n: number) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":{"n":${n}}}` }] });
    const chat = await createWorkerChat(db, user, script([finalize(1), finalize(2)]),
      { model: "scripted-every-step", workspace: null, responseFormat: structured("r", { type: "object" }) });
    await waitForStatus(db, chat, "waiting");
    const { rows: receipts } = await db.pool.query<{ v: string }>(
      "select (structured_output -> 'value')::text as v from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'", [chat]);
    assert.equal(receipts.map((x) => x.v), ['{"n": 2}']);
    const all = await rows(chat);
    assert.ok(all.some((r) => r.kind === "summary"), "compaction ran between the continuation and candidate B");
    const carried = all.filter((r) => r.kind === "control" && r.role === "user" && !r.compressed);
    assert.ok(carried.some((c) => c.text!.includes("Recheck the value.")), "the hook's unanswered context was carried over");
    assert.is((await progress(chat)).hook_continuations, 1);
  } finally {
    await removeStopHooks(db);
    await hook.close();
  }
});

test("(scripted) manual compaction: compactChat, then the next turn compacts first; clients see the marker only", async () => {
  const chat = await createWorkerChat(db, user, script([{ text: "first turn" }]), { workspace: null });
  await waitForStatus(db, chat, "waiting");
  const requested = await asUser(db, user, async (c) =>
    (await c.query<{ at: string | null }>("select compaction_requested_at as at from chat_public.compact_chat($1)", [chat])).rows[0]!);
  assert.ok(requested.at != null);
  await sendMessage(db, user, chat, script([{ text: "second turn" }]));
  await waitFor("the second turn to finish", async () => {
    const { rows: r } = await db.pool.query<{ done: boolean }>(
      `select status = 'waiting' and (select count(*) from chat_public.chat_messages m where m.chat_id = c.id and m.role = 'assistant' and m.kind = 'message') = 2 as done
       from chat_public.chats c where c.id = $1`, [chat]);
    return r[0]!.done || undefined;
  });
  const all = await rows(chat);
  const summary = all.findIndex((r) => r.kind === "summary" && r.visibility === "model");
  assert.ok(summary > 0);
  assert.ok(all.slice(0, summary).every((r) => r.compressed), "the first turn and the new input were compressed");
  assert.is(all.at(-1)!.text, "second turn", "the carried input ran as its own turn (the script started at step 0)");
  const { rows: chatRow } = await db.pool.query<{ at: string | null }>("select compaction_requested_at as at from chat_public.chats where id = $1", [chat]);
  assert.is(chatRow[0]!.at, null, "the request was honoured and cleared");
  const visible = await asUser(db, user, async (c) =>
    (await c.query<{ kind: string; visibility: string }>("select kind::text, visibility::text from chat_public.chat_messages where chat_id = $1 and kind = 'summary'", [chat])).rows);
  assert.equal(visible, [{ kind: "summary", visibility: "user" }], "the model-only summary is hidden from clients; the marker is not");
});

test.run();
