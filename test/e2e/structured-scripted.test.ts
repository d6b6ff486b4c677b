// Structured output end to end with the scripted provider (deterministic, not a real model): the finalizer, the
// repair budget, batching rules, finish provenance and exactly one receipt per request, through the real
// database and worker.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, interrupt, sendMessage, setStructuredExperiment, structured, text } from "../support/chats.ts";
import { createTestDatabase, sqlState, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, messages, setSetting, startTestWorker, waitFor, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "structured");
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

const script = (steps: object[]) => JSON.stringify({ script: steps });
const finalize = (argsRaw: string, extra: object = {}) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: argsRaw }], ...extra });
const REPORT = { type: "object", properties: { n: { type: "integer", maximum: 9007199254740992 }, d: { type: "number" } },
  required: ["n"], additionalProperties: false };

interface Outcome { status: string; code: string | null; valueJson: string | null; hasValue: boolean; receipts: number; rejected: number }

async function outcome(chatId: string): Promise<Outcome> {
  const { rows } = await db.pool.query<Outcome>(
    `select r.status::text as status, r.error_code as code, (m.structured_output -> 'value')::text as "valueJson",
            coalesce(m.structured_output ? 'value', false) as "hasValue",
            (select count(*)::int from chat_public.chat_messages x where x.structured_output_request_id = r.id and x.kind = 'receipt') as receipts,
            (select t.rejected_batches from chat_private.turn_progress t where t.structured_output_request_id = r.id) as rejected
     from chat_public.structured_output_requests r left join chat_public.chat_messages m on m.id = r.receipt_message_id
     where r.chat_id = $1 order by r.created_at limit 1`, [chatId]);
  return rows[0]!;
}

async function run(steps: object[] | string, schema: object = REPORT, options: { workspace?: string | null; dynamicTools?: object[] } = {}): Promise<{ chat: string; result: Outcome }> {
  const content = typeof steps === "string" ? steps : script(steps);
  const chat = await createWorkerChat(db, user, content, { responseFormat: structured("report", schema), ...options });
  await waitFor("the request to end", async () => (await outcome(chat)).status !== "pending" || undefined);
  await waitForStatus(db, chat, "waiting");
  return { chat, result: await outcome(chat) };
}

test("a valid finalization succeeds with exact numbers; the receipt text is the JSON text", async () => {
  const { chat, result } = await run([finalize('{"output":{"n":9007199254740992,"d":0.1000000000000000000000000001}}')]);
  assert.equal([result.status, result.code, result.receipts], ["succeeded", null, 1]);
  assert.is(result.valueJson, '{"d": 0.1000000000000000000000000001, "n": 9007199254740992}');
  const receipt = (await messages(db, chat)).find((m) => m.kind === "receipt")!;
  assert.is(receipt.content[0]!.text, result.valueJson);
});

for (const [name, schema, args, expected] of [
  ["array", { type: "array", items: { type: "integer" } }, '{"output":[1,2,123456789012345678901234567890]}', "[1, 2, 123456789012345678901234567890]"],
  ["nullable union (null)", { type: ["object", "null"] }, '{"output":null}', "null"],
  ["nullable union (object)", { type: ["object", "null"], properties: { a: { type: "string" } } }, '{"output":{"a":"x"}}', '{"a": "x"}'],
  ["string", { type: "string", format: "date" }, '{"output":"2026-11-29"}', '"2026-11-29"'],
] as const) {
  test(`${name} output succeeds with the exact value`, async () => {
    const { result } = await run([finalize(args)], schema);
    assert.equal([result.status, result.valueJson, result.hasValue], ["succeeded", expected, true]);
  });
}

test("the scripted default plan uses the workspace, then finalizes with a value built from the schema", async () => {
  const { chat, result } = await run("summarise my workspace", { type: "object", properties: { kind: { enum: ["report", "note"] }, count: { type: "integer", minimum: 3 } },
    required: ["kind", "count"] }, { workspace: "ws" });
  assert.is(result.status, "succeeded");
  assert.equal(JSON.parse(result.valueJson!), { kind: "report", count: 3 });
  const names = (await messages(db, chat)).flatMap((m) => m.content.filter((p) => p.type === "tool-call").map((p) => p.tool_name));
  assert.equal(names, ["list_files", "read_file", "coder_structured_output"]);
});

test("text-only answers never succeed: three of them fail with not_produced", async () => {
  const { chat, result } = await run([{ text: "here it is: {\"n\": 1}" }, { text: "again" }, { text: "and again" }]);
  assert.equal([result.status, result.code, result.rejected, result.receipts, result.hasValue], ["failed", "not_produced", 3, 1, false]);
  const controls = (await messages(db, chat)).filter((m) => m.kind === "control");
  assert.is(controls.length, 3, "each text-only rejection asked the model to finalize");
  assert.ok(controls.every((m) => m.visibility === "model"));
});

test("invalid, then valid on the repair: succeeds", async () => {
  const { result } = await run([finalize('{"output":{"n":9007199254740993}}'), finalize('{"output":{"n":7}}')]);
  assert.equal([result.status, result.valueJson, result.rejected], ["succeeded", '{"n": 7}', 1]);
});

test("three invalid values fail with validation_exhausted; unsafe bytes are never stored", async () => {
  const dup = '{"output":{"n":1,"n":2}}';
  const huge = '{"output":{"n":1,"d":1e400}}';
  const { chat, result } = await run([finalize(dup), finalize(huge), finalize('{"output":{"n":"one"}}')]);
  assert.equal([result.status, result.code, result.rejected, result.receipts], ["failed", "validation_exhausted", 3, 1]);
  const { rows } = await db.pool.query<{ found: number }>(
    `select count(*)::int as found from chat_public.chat_messages m left join chat_private.message_internals i on i.message_id = m.id
     where m.chat_id = $1 and m.role <> 'user' and (m.content::text like '%1e400%' or coalesce(i.provider_metadata::text, '') like '%1e400%'
       or coalesce(i.provider_metadata::text, '') like $2)`, [chat, `%${dup.replace(/"/g, '\\\\"')}%`]);
  assert.is(rows[0]!.found, 0, "neither unsafe payload was persisted (outside the scripted user input that carries it)");
  const calls = (await messages(db, chat)).flatMap((m) => m.content.filter((p) => p.type === "tool-call"));
  assert.equal(calls[0]!.args, { chatd_rejected_arguments: "duplicate-key" });
  assert.equal(calls[1]!.args, { chatd_rejected_arguments: "number-range" });
  const screening = await db.pool.query<{ s: { reason: string } }>(
    `select i.finalizer_screening as s from chat_private.message_internals i join chat_public.chat_messages m on m.id = i.message_id
     where m.chat_id = $1 and i.finalizer_screening is not null order by m.id`, [chat]);
  assert.equal(screening.rows.map((r) => r.s.reason), ["invalid_arguments", "invalid_arguments", "invalid_value"]);
});

test("a finalizer beside another call is an invalid batch: the sibling is skipped, not executed", async () => {
  const { chat, result } = await run([
    { tool_calls: [{ name: "coder_structured_output", args: { output: { n: 1 } } }, { name: "read_file", args: { path: "a.txt" } }] },
    finalize('{"output":{"n":2}}'),
  ], REPORT, { workspace: "ws" });
  assert.equal([result.status, result.valueJson, result.rejected], ["succeeded", '{"n": 2}', 1]);
  const results = (await messages(db, chat)).flatMap((m) => m.content.filter((p) => p.type === "tool-result"));
  const sibling = results.find((p) => p.tool_name === "read_file")!;
  assert.match(JSON.stringify(sibling.result), /skipped/);
});

test("two finalizer calls in one batch are rejected", async () => {
  const { result } = await run([
    { tool_calls: [{ name: "coder_structured_output", args: { output: { n: 1 } } }, { name: "coder_structured_output", args: { output: { n: 2 } } }] },
    finalize('{"output":{"n":3}}'),
  ]);
  assert.equal([result.status, result.valueJson, result.rejected], ["succeeded", '{"n": 3}', 1]);
});

test("a truncated step whose arguments parse produces no candidate", async () => {
  const { result } = await run([finalize('{"output":{"n":1}}', { finish: "length" }), finalize('{"output":{"n":4}}')]);
  assert.equal([result.status, result.valueJson, result.rejected], ["succeeded", '{"n": 4}', 1]);
});

test("a content-filtered step fails the request at once with refused", async () => {
  const { result } = await run([finalize('{"output":{"n":1}}', { finish: "content-filter" })]);
  assert.equal([result.status, result.code, result.receipts], ["failed", "refused", 1]);
});

test("the step limit without a candidate fails with not_produced", async () => {
  await setSetting(db, "max_steps_per_turn", 2);
  try {
    const { result } = await run([
      { tool_calls: [{ name: "list_files", args: { path: "." } }] }, { tool_calls: [{ name: "list_files", args: { path: "." } }] },
      finalize('{"output":{"n":1}}'),
    ], REPORT, { workspace: "ws" });
    assert.equal([result.status, result.code], ["failed", "not_produced"]);
  } finally {
    await setSetting(db, "max_steps_per_turn", 200);
  }
});

test("a dynamic-tool pause precedes finalization; the finalizer is never pending for the client", async () => {
  const chat = await createWorkerChat(db, user, script([
    { tool_calls: [{ name: "lookup", args: { q: "x" } }] }, finalize('{"output":{"n":5}}'),
  ]), { responseFormat: structured("report", REPORT), dynamicTools: [{ name: "lookup", description: "client lookup", input_schema: { type: "object" } }] });
  await waitForStatus(db, chat, "requires_action");
  const { rows } = await db.pool.query<{ calls: { tool_name: string; tool_call_id: string }[] }>(
    "select pending_tool_calls as calls from chat_public.chats where id = $1", [chat]);
  assert.equal(rows[0]!.calls.map((c) => c.tool_name), ["lookup"]);
  const refused = await sqlState(asUser(db, user, (c) => c.query("select chat_public.submit_tool_results($1, $2)",
    [chat, JSON.stringify([{ tool_call_id: "coder_structured_output", result: { output: { n: 1 } } }])])));
  assert.is(refused, "TLRES");
  await asUser(db, user, (c) => c.query("select chat_public.submit_tool_results($1, $2)",
    [chat, JSON.stringify([{ tool_call_id: rows[0]!.calls[0]!.tool_call_id, result: { answer: 1 } }])]));
  await waitForStatus(db, chat, "waiting");
  assert.equal([(await outcome(chat)).status, (await outcome(chat)).valueJson], ["succeeded", '{"n": 5}']);
});

test("a stored schema that no longer passes validation fails the request with configuration_error", async () => {
  // A raw SQL caller gets only the envelope checks: `$ref` is refused by the worker's re-validation.
  await db.pool.query("select set_config('jwt.claims.sub', $1, false)", [user]);
  const { rows } = await db.as("chat_user", user, (c) => c.query<{ chat_id: string }>(
    "select * from chat_public.create_chat($1, $2)",
    [text(script([finalize('{"output":{}}')])), JSON.stringify({ type: "json_schema", json_schema: { name: "r", schema: { $ref: "#/definitions/x" } } })]), true);
  const chat = rows[0]!.chat_id;
  await waitFor("the request to end", async () => (await outcome(chat)).status !== "pending" || undefined);
  assert.equal([(await outcome(chat)).status, (await outcome(chat)).code], ["failed", "configuration_error"]);
});

test("interrupting A with B queued: A interrupted, B succeeds under its own id", async () => {
  const chat = await createWorkerChat(db, user, script([{ delay_ms: 5000, text: "slow" }]), { responseFormat: structured("a", REPORT) });
  await waitFor("A to stream", async () => (await db.pool.query(
    "select 1 from chat_private.chat_leases where chat_id = $1", [chat])).rows.length > 0 || undefined);
  const b = await sendMessage(db, user, chat, script([finalize('{"output":{"n":11}}')]), structured("b", REPORT));
  await interrupt(db, user, chat);
  await waitFor("B to end", async () => {
    const { rows } = await db.pool.query<{ status: string }>("select status::text from chat_public.structured_output_requests where id = $1", [b.structured_output_request_id]);
    return rows[0]!.status !== "pending" || undefined;
  });
  const { rows } = await db.pool.query<{ id: string; status: string; code: string | null; value: string | null }>(
    `select r.id, r.status::text, r.error_code as code, (m.structured_output -> 'value')::text as value
     from chat_public.structured_output_requests r join chat_public.chat_messages m on m.id = r.receipt_message_id
     where r.chat_id = $1 order by m.id`, [chat]);
  assert.equal(rows.map((r) => [r.status, r.code, r.value]), [["canceled", "interrupted", null], ["succeeded", null, '{"n": 11}']]);
  assert.is(rows[1]!.id, b.structured_output_request_id);
});

test("an ordinary message after a structured one never reuses the schema", async () => {
  const { chat } = await run([finalize('{"output":{"n":1}}')]);
  await sendMessage(db, user, chat, script([{ text: "just text" }]));
  await waitFor("the text turn", async () => (await messages(db, chat)).some((m) => m.content.some((p) => p.text === "just text")) || undefined);
  await waitForStatus(db, chat, "waiting");
  const { rows } = await db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.structured_output_requests where chat_id = $1", [chat]);
  assert.is(rows[0]!.n, 1);
  const last = (await messages(db, chat)).filter((m) => m.role === "assistant").pop()!;
  assert.is(last.content[0]!.text, "just text");
});

test.run();
