// Structured output over each provider wire protocol, against the mock provider servers (real HTTP + SSE on
// 127.0.0.1; mock providers, not live APIs): what the provider is sent (the finalizer beside the other tools,
// the caller's schema unmodified, tool choice automatic, never strict), a repair after an invalid value, exact
// values in the receipt, Anthropic thinking signatures replayed across repair steps, and provider rejections
// ending as explicit failed receipts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startMockProvider, type MockProviderServer, type MockResponse } from "../support/mock-providers/index.ts";
import { addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, startTestWorker, waitFor, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let user: string;

const PROVIDERS = ["openai-chat", "openai-responses", "anthropic"] as const;
const SCHEMA = { type: "object", properties: { total: { type: "integer", maximum: 9007199254740992 }, label: { type: "string", pattern: "^[a-z]+$" } },
  required: ["total"], additionalProperties: false };

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  server = await startMockProvider();
  for (const provider of PROVIDERS) await addModelConfig(db, provider, provider, server.url);
  await addModelConfig(db, "chat-strict", "openai-chat", server.url);
  await db.pool.query(`update chat_private.model_configs set options = '{"strictTools": true}' where id = 'chat-strict'`);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "proto");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

interface ToolView { name: string; parameters: unknown; strict: unknown }

/** The tools of one captured request, whatever the protocol's shape. */
function toolsOf(body: Record<string, unknown>): ToolView[] {
  const tools = (body.tools ?? []) as Record<string, unknown>[];
  return tools.map((tool) => {
    const fn = tool.function as Record<string, unknown> | undefined;
    if (fn) return { name: String(fn.name), parameters: fn.parameters, strict: fn.strict };
    return { name: String(tool.name), parameters: tool.parameters ?? tool.input_schema, strict: tool.strict };
  });
}

async function receipt(chatId: string): Promise<{ status: string; code: string | null; value: string | null }> {
  const { rows } = await db.pool.query<{ status: string; code: string | null; value: string | null }>(
    `select structured_output ->> 'status' as status, structured_output -> 'error' ->> 'code' as code,
            (structured_output -> 'value')::text as value
     from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'`, [chatId]);
  return rows[0]!;
}

async function runChat(model: string, responses: MockResponse[], settled = "waiting"): Promise<{ chat: string; bodies: Record<string, unknown>[] }> {
  const from = server.requests.length;
  server.enqueue(...responses);
  const chat = await createWorkerChat(db, user, "count the files", { model, responseFormat: structured("count", SCHEMA) });
  await waitFor("the receipt", async () => (await db.pool.query("select 1 from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'", [chat])).rows.length > 0 || undefined);
  await waitForStatus(db, chat, settled);
  return { chat, bodies: server.requests.slice(from).map((r) => r.body as Record<string, unknown>) };
}

for (const provider of PROVIDERS) {
  test(`${provider} (mock): workspace tool, invalid value, repair, exact success; the finalizer is sent unmodified and never strict`, async () => {
    const id = provider.replace(/-/g, "_");
    const reasoning = provider === "anthropic" ? (n: number) => ({ reasoning: { text: `thinking ${n}`, signature: `sig-${id}-${n}` } }) : () => ({});
    const { chat, bodies } = await runChat(provider, [
      { ...reasoning(1), toolCalls: [{ id: `${id}_1`, name: "read_file", fragments: ['{"path":"a.txt"}'] }] },
      { ...reasoning(2), toolCalls: [{ id: `${id}_2`, name: "coder_structured_output", fragments: ['{"output":{"total":9007199254740993}}'] }] },
      { ...reasoning(3), toolCalls: [{ id: `${id}_3`, name: "coder_structured_output", fragments: ['{"output":{"total":', "9007199254740992,", '"label":"files"}}'] }] },
    ]);
    assert.equal(await receipt(chat), { status: "succeeded", code: null, value: '{"label": "files", "total": 9007199254740992}' });
    assert.is(bodies.length, 3);
    for (const body of bodies) {
      const tools = toolsOf(body);
      const finalizer = tools.find((t) => t.name === "coder_structured_output");
      assert.ok(finalizer, "the finalizer is offered on every step of the governing request");
      assert.equal(finalizer!.parameters, { type: "object", properties: { output: SCHEMA }, required: ["output"], additionalProperties: false });
      assert.ok(finalizer!.strict === undefined || finalizer!.strict === false, `no strict flag on the finalizer (${String(finalizer!.strict)})`);
      assert.ok(tools.some((t) => t.name === "read_file"), "beside the other tools");
      const choice = body.tool_choice as unknown;
      assert.ok(choice === undefined || choice === "auto" || (choice as { type?: string }).type === "auto", `tool choice automatic: ${JSON.stringify(choice)}`);
    }
    // The rejected value's feedback reached the model with its pointer.
    assert.match(JSON.stringify(bodies[2]), /\/total/);
    if (provider === "anthropic") {
      // Thinking signatures replay across the repair step.
      assert.match(JSON.stringify(bodies[1]), /sig-anthropic-1/);
      assert.match(JSON.stringify(bodies[2]), /sig-anthropic-2/);
    }
  });
}

test("strict tools configured (openai-chat, mock): ordinary tools strict, the finalizer alone not", async () => {
  const { chat, bodies } = await runChat("chat-strict", [
    { toolCalls: [{ id: "s1", name: "coder_structured_output", fragments: ['{"output":{"total":1}}'] }] },
  ]);
  assert.is((await receipt(chat)).status, "succeeded");
  const tools = toolsOf(bodies[0]!);
  assert.is(tools.find((t) => t.name === "read_file")!.strict, true);
  assert.is(tools.find((t) => t.name === "coder_structured_output")!.strict, false);
});

test("a provider rejection (schema-related 400, mock) ends as an explicit failed receipt, never a text fallback; the chat is in error", async () => {
  const { chat } = await runChat("openai-chat", [{ kind: "http-error", status: 400, body: { error: { message: "Invalid schema for function 'coder_structured_output': SECRET-DETAIL" } } }], "error");
  const result = await receipt(chat);
  assert.equal([result.status, result.code, result.value], ["failed", "generation_failed", null]);
  const { rows } = await db.pool.query<{ text: string }>(
    "select structured_output -> 'error' ->> 'message' as text from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'", [chat]);
  assert.not.match(rows[0]!.text, /SECRET-DETAIL/, "no provider body in the receipt");
});

test("oversized finalizer arguments (mock) are cut off while streaming and never stored; the repair succeeds", async () => {
  const chunk = "x".repeat(100 * 1024);
  const { chat, bodies } = await runChat("openai-chat", [
    { toolCalls: [{ id: "big1", name: "coder_structured_output", fragments: ['{"output":{"total":1,"label":"', chunk, chunk, chunk, '"}}'] }] },
    { toolCalls: [{ id: "big2", name: "coder_structured_output", fragments: ['{"output":{"total":8}}'] }] },
  ]);
  assert.equal([(await receipt(chat)).status, (await receipt(chat)).value], ["succeeded", '{"total": 8}']);
  assert.is(bodies.length, 2);
  assert.match(JSON.stringify(bodies[1]), /exceeded/, "the model was told why its attempt was rejected");
  const { rows } = await db.pool.query<{ bytes: number; capped: boolean | null }>(
    `select octet_length(m.content::text) + coalesce(octet_length(i.provider_metadata::text), 0) as bytes,
            (i.finalizer_screening ->> 'cap_exceeded')::boolean as capped
     from chat_public.chat_messages m left join chat_private.message_internals i on i.message_id = m.id
     where m.chat_id = $1 and m.role = 'assistant' order by m.id limit 1`, [chat]);
  assert.is(rows[0]!.capped, true, "the byte cap stopped the stream");
  assert.ok(rows[0]!.bytes < 4096, `the payload was not persisted (${rows[0]!.bytes} bytes)`);
});

test("a refusal (mock) fails the request with refused", async () => {
  const { chat } = await runChat("openai-chat", [{ refusal: "I can't help with that." }]);
  assert.equal([(await receipt(chat)).status, (await receipt(chat)).code], ["failed", "refused"]);
});

test.run();
