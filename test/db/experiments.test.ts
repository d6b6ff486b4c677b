// Admission of structured requests: the experiment gate (RFOFF), plan mode (RFPLN,
// SOACT), child chats (RFCHD), the reserved tool name (RFTNM) and the envelope rules in SQL (RFINV with the field).
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import {
  acquire, asUser, commitCandidate, createChat, createUser, dynamicTool, editMessage, finishTurn, receipts, requestStatus,
  sendMessage, setPlanMode, setStructuredExperiment, structured, text,
} from "../support/chats.ts";

let db: TestDatabase;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  user = await createUser(db, "experiments");
});
test.after(async () => {
  await db.drop();
});

async function totals() {
  const { rows } = await db.pool.query(
    `select (select count(*) from chat_public.chats)::int as chats, (select count(*) from chat_public.chat_messages)::int as messages,
            (select count(*) from chat_public.chat_queued_messages)::int as queued,
            (select count(*) from chat_public.structured_output_requests)::int as requests,
            (select count(*) from chat_private.turn_progress)::int as turns,
            (select coalesce(sum(snapshot_version), 0)::int from chat_public.chats) as versions`);
  return rows[0];
}

/** The SQLSTATE and the error's `column` (pg exposes it as `.column`). */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; column: string | undefined }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; column?: string };
    if (typeof e.code === "string") return { code: e.code, column: e.column };
    throw error;
  }
  throw new Error("expected the statement to fail, but it succeeded");
}

test("the experiment is off by default", async () => {
  const { rows } = await db.pool.query("select enabled from chat_private.experiments where name = 'chat-structured-output'");
  assert.equal(rows, [{ enabled: false }]);
});

test("with the experiment off, a structured create is refused (RFOFF) and nothing is persisted", async () => {
  await setStructuredExperiment(db, false);
  const before = await totals();
  const refused = await refusal(createChat(db, user, "structured", structured()));
  assert.equal(refused, { code: "RFOFF", column: "response_format" });
  assert.equal(await totals(), before);
});

test("with the experiment off, a structured send is refused (RFOFF) and nothing is persisted", async () => {
  await setStructuredExperiment(db, false);
  const chat = await createChat(db, user, "text chat");
  await acquire(db, chat.chat_id);
  const before = await totals();
  assert.is(await sqlState(sendMessage(db, user, chat.chat_id, "structured", structured())), "RFOFF");
  assert.is(await sqlState(sendMessage(db, user, chat.chat_id, "structured", structured(), "interrupt")), "RFOFF");
  assert.equal(await totals(), before);
});

test("with the experiment off, text requests work (omitted, null and {\"type\":\"text\"})", async () => {
  await setStructuredExperiment(db, false);
  const chat = await createChat(db, user, "text", JSON.stringify({ type: "text" }));
  assert.is(chat.structured_output_request_id, null);
  assert.ok(chat.message_id);
  const queued = await sendMessage(db, user, chat.chat_id, "more text", "null");
  assert.is(queued.structured_output_request_id, null);
  await createChat(db, user, "text");
});

test("with the experiment off, an edit that would preserve a structured format is refused (RFOFF) and changes nothing", async () => {
  await setStructuredExperiment(db, true);
  const chat = await createChat(db, user, "structured", structured());
  await setStructuredExperiment(db, false);
  const before = await totals();
  assert.is(await sqlState(editMessage(db, user, chat.message_id!, "edited")), "RFOFF");
  assert.is(await sqlState(editMessage(db, user, chat.message_id!, "edited", structured("other"))), "RFOFF");
  assert.equal(await totals(), before);
  assert.is((await requestStatus(db, chat.structured_output_request_id!)).status, "pending");
  // Clearing the format is a text request and works; the old request is superseded.
  const edited = await editMessage(db, user, chat.message_id!, "edited", JSON.stringify({ type: "text" }));
  assert.is(edited.structured_output_request_id, null);
  assert.is((await requestStatus(db, chat.structured_output_request_id!)).error_code, "superseded");
});

test("a request accepted before switching off still finishes with its receipt (running and queued)", async () => {
  await setStructuredExperiment(db, true);
  const chat = await createChat(db, user, "accepted", structured());
  const fence = await acquire(db, chat.chat_id);
  const queued = await sendMessage(db, user, chat.chat_id, "accepted too", structured("second"));
  await setStructuredExperiment(db, false);
  assert.is(await finishTurn(db, await commitCandidate(db, fence, '{"done": 1}')), "running");
  const next = await acquire(db, chat.chat_id);
  await finishTurn(db, await commitCandidate(db, next, '{"done": 2}'));
  const all = await receipts(db, chat.chat_id);
  assert.equal(all.map((r) => [r.request_id, r.status]),
    [[chat.structured_output_request_id, "succeeded"], [queued.structured_output_request_id, "succeeded"]]);
});

test("a structured request in a plan-mode chat is refused (RFPLN)", async () => {
  await setStructuredExperiment(db, true);
  const before = await totals();
  assert.is(await sqlState(createChat(db, user, "plan", structured(), { planMode: true })), "RFPLN");
  assert.equal(await totals(), before);
  const chat = await createChat(db, user, "plan", null, { planMode: true });
  assert.is(await sqlState(sendMessage(db, user, chat.chat_id, "structured", structured())), "RFPLN");
  await setPlanMode(db, user, chat.chat_id, false);
  await sendMessage(db, user, chat.chat_id, "structured now", structured());
});

test("switching into plan mode with an active or queued structured request is refused (SOACT)", async () => {
  await setStructuredExperiment(db, true);
  const active = await createChat(db, user, "active", structured());
  const refused = await refusal(setPlanMode(db, user, active.chat_id, true));
  assert.equal(refused, { code: "SOACT", column: "enabled" });

  const running = await createChat(db, user, "text turn");
  const fence = await acquire(db, running.chat_id);
  const queued = await sendMessage(db, user, running.chat_id, "queued structured", structured());
  assert.is(await sqlState(setPlanMode(db, user, running.chat_id, true)), "SOACT");
  const { rows } = await db.pool.query("select plan_mode from chat_public.chats where id = $1", [running.chat_id]);
  assert.equal(rows, [{ plan_mode: false }]);

  // Once no structured request is active or queued, plan mode may start.
  await asUser(db, user, (c) => c.query("select chat_public.delete_queued_message($1)", [queued.queued_message_id]));
  await setPlanMode(db, user, running.chat_id, true);
  await finishTurn(db, fence);
});

test("a child chat refuses structured requests (RFCHD)", async () => {
  await setStructuredExperiment(db, true);
  const parent = await createChat(db, user, "parent");
  const child = await createChat(db, user, "child");
  await db.pool.query("update chat_public.chats set parent_chat_id = $1 where id = $2", [parent.chat_id, child.chat_id]);
  const before = await totals();
  assert.equal(await refusal(sendMessage(db, user, child.chat_id, "structured", structured())), { code: "RFCHD", column: "response_format" });
  assert.equal(await totals(), before);
  await sendMessage(db, user, child.chat_id, "text is fine");
});

test("a dynamic tool named coder_structured_output is refused in every chat, on dynamic_tools (RFTNM)", async () => {
  await setStructuredExperiment(db, true);
  const tools = [dynamicTool("read_it"), dynamicTool("coder_structured_output")];
  const before = await totals();
  assert.equal(await refusal(createChat(db, user, "collide", structured(), { dynamicTools: tools })), { code: "RFTNM", column: "dynamic_tools" });
  assert.equal(await refusal(createChat(db, user, "collide as text", null, { dynamicTools: tools })), { code: "RFTNM", column: "dynamic_tools" });
  assert.equal(await totals(), before);
  // A chat that holds such a tool from before the rule refuses structured requests, naming dynamic_tools too.
  const chat = await createChat(db, user, "older chat", null, { dynamicTools: [dynamicTool("read_it")] });
  await db.pool.query("update chat_public.chats set dynamic_tools = $1 where id = $2", [JSON.stringify(tools), chat.chat_id]);
  assert.equal(await refusal(sendMessage(db, user, chat.chat_id, "structured", structured())), { code: "RFTNM", column: "dynamic_tools" });
});

interface Case { name: string; text: string; valid: boolean; field?: string; sql: boolean }
const cases = (JSON.parse(readFileSync(new URL("../fixtures/response-format-envelope.json", import.meta.url), "utf8")) as Case[])
  .filter((c) => c.sql);

test("envelope fixture: invalid cases raise RFINV with the field in `column` and persist nothing", async () => {
  await setStructuredExperiment(db, true);
  const invalid = cases.filter((c) => !c.valid);
  assert.ok(invalid.length >= 30);
  const before = await totals();
  for (const c of invalid) {
    const refused = await refusal(asUser(db, user, (client) => client.query("select chat_public.create_chat($1, $2)", [text("x"), c.text])));
    assert.equal(refused, { code: "RFINV", column: c.field }, c.name);
  }
  assert.equal(await totals(), before);
});

test("envelope fixture: valid cases are accepted", async () => {
  await setStructuredExperiment(db, true);
  for (const c of cases.filter((x) => x.valid)) {
    const chat = await asUser(db, user, (client) => client.query<{ request: string | null }>(
      "select structured_output_request_id as request from chat_public.create_chat($1, $2)", [text("x"), c.text]));
    const isText = (JSON.parse(c.text) as { type?: string }).type === "text";
    assert.is(chat.rows[0]!.request === null, isText, c.name);
  }
});

test("a response_format that is not JSON text raises RFINV on response_format", async () => {
  await setStructuredExperiment(db, true);
  for (const bad of ["{", "{\"type\": \"text\"} trailing", ""]) {
    assert.equal(await refusal(createChat(db, user, "x", bad)), { code: "RFINV", column: "response_format" }, bad);
  }
});

test.run();
