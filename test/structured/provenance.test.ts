// Receipt provenance: every receipt (succeeded, failed, canceled, one that never ran) records how it came about in
// structured_output_requests, and GraphQL's structuredOutput carries the same; the operator view groups by model.
// The steps are committed through the worker transitions directly (no provider), with the usage a provider reports.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, commitStep, createChat, deleteQueued, finishTurn, sendMessage, structured, type Fence } from "../support/chats.ts";
import { startTestApi, type TestApi } from "../api/harness.ts";

let t: TestApi;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  await t.db.pool.query("insert into chat_private.model_configs (id, provider, model) values ('other', 'openai-chat', 'gpt-test')");
});
test.after(async () => { await t.close(); });

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
const finalizerCall = (id: string) => ({ type: "tool-call", tool_call_id: id, tool_name: "coder_structured_output", args: {} });

/** A rejected finalizer attempt (an invalid value), as the worker commits it. */
function rejectedStep(fence: Fence, id: string, reported?: object): Promise<Fence> {
  return commitStep(t.db, fence, [
    { role: "assistant", content: [finalizerCall(id)], ...(reported ? { usage: reported } : {}) },
    { role: "tool", content: [{ type: "tool-result", tool_call_id: id, tool_name: "coder_structured_output", result: { error: "bad" }, is_error: true }] },
  ], { steps: 1, rejection: { value_rejected: true } });
}

function candidateStep(fence: Fence, id: string, reported?: object): Promise<Fence> {
  return commitStep(t.db, fence, [{ role: "assistant", content: [finalizerCall(id)], ...(reported ? { usage: reported } : {}) }],
    `{"steps": 1, "candidate": {"value": {"n": 1}, "step": 2, "message_index": 0}}`);
}

interface Provenance {
  finalization_attempts: number | null; model_steps: number | null; model_config_id: string | null; provider: string | null;
  model: string | null; input_tokens: string | null; output_tokens: string | null; started: boolean; ordered: boolean;
}

async function provenance(requestId: string): Promise<Provenance> {
  const { rows } = await t.db.pool.query<Provenance>(
    `select finalization_attempts, model_steps, model_config_id, provider, model, input_tokens, output_tokens,
            started_at is not null as started, started_at <= finished_at and created_at <= started_at as ordered
     from chat_public.structured_output_requests where id = $1`, [requestId]);
  return rows[0]!;
}

test("a success after a repair: two attempts, three steps, the model, tokens summed over the turn's steps", async () => {
  const chat = await createChat(t.db, alice.id, "count", structured("count"));
  let fence = await acquire(t.db, chat.chat_id);
  fence = await commitStep(t.db, fence, [{ role: "assistant", content: [{ type: "text", text: "thinking" }], usage: usage(100, 7) }], { steps: 1 });
  fence = await rejectedStep(fence, "f1", usage(120, 9));
  fence = await candidateStep(fence, "f2", usage(140, 11));
  assert.is(await finishTurn(t.db, fence), "waiting");
  assert.equal(await provenance(chat.structured_output_request_id!), {
    finalization_attempts: 2, model_steps: 3, model_config_id: "scripted", provider: "scripted", model: "scripted-demo",
    input_tokens: "360", output_tokens: "27", started: true, ordered: true,
  });
});

test("a failed receipt carries the same; tokens are null when no step reported them", async () => {
  const chat = await createChat(t.db, alice.id, "count", structured("count"));
  await t.db.pool.query("update chat_public.chats set model_config_id = 'other' where id = $1", [chat.chat_id]);
  let fence = await acquire(t.db, chat.chat_id);
  fence = await rejectedStep(fence, "f1");
  fence = await rejectedStep(fence, "f2");
  fence = await rejectedStep(fence, "f3");
  await finishTurn(t.db, fence, { status: "failed", code: "validation_exhausted" });
  assert.equal(await provenance(chat.structured_output_request_id!), {
    finalization_attempts: 3, model_steps: 3, model_config_id: "other", provider: "openai-chat", model: "gpt-test",
    input_tokens: null, output_tokens: null, started: true, ordered: true,
  });
});

test("a request that never ran: no attempts, no steps, no start; the chat's model", async () => {
  const chat = await createChat(t.db, alice.id, "busy");
  const queued = await sendMessage(t.db, alice.id, chat.chat_id, "later", structured("later"));
  await deleteQueued(t.db, alice.id, queued.queued_message_id!);
  assert.equal(await provenance(queued.structured_output_request_id!), {
    finalization_attempts: 0, model_steps: 0, model_config_id: "scripted", provider: "scripted", model: "scripted-demo",
    input_tokens: null, output_tokens: null, started: false, ordered: null as unknown as boolean,
  });
});

test("GraphQL: structuredOutput.provenance, and the request's own fields", async () => {
  const chat = await createChat(t.db, alice.id, "count", structured("count"));
  let fence = await acquire(t.db, chat.chat_id);
  fence = await candidateStep(fence, "f1", usage(50, 5));
  await finishTurn(t.db, fence);
  const response = await t.gql<{ chatByRowId: { messages: { nodes: { kind: string; structuredOutput: { status: string; provenance: Record<string, unknown> } | null }[] } };
    structuredOutputRequestByRowId: Record<string, unknown> }>(
    `query($id: UUID!, $r: UUID!) {
      chatByRowId(rowId: $id) { messages { nodes { kind structuredOutput { status provenance {
        finalizationAttempts modelSteps modelConfigId provider model inputTokens outputTokens startedAt finishedAt schemaSha256 } } } } }
      structuredOutputRequestByRowId(rowId: $r) { finalizationAttempts modelSteps modelConfigId provider model inputTokens outputTokens startedAt finishedAt schemaSha256 }
    }`, { id: chat.chat_id, r: chat.structured_output_request_id }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  const receipt = response.data!.chatByRowId.messages.nodes.find((m) => m.kind === "RECEIPT")!;
  const p = receipt.structuredOutput!.provenance;
  const { rows } = await t.db.pool.query<{ schema_sha256: string }>("select schema_sha256 from chat_public.structured_output_requests where id = $1", [chat.structured_output_request_id]);
  assert.equal({ ...p, startedAt: typeof p.startedAt, finishedAt: typeof p.finishedAt }, {
    finalizationAttempts: 1, modelSteps: 1, modelConfigId: "scripted", provider: "scripted", model: "scripted-demo",
    inputTokens: "50", outputTokens: "5", startedAt: "string", finishedAt: "string", schemaSha256: rows[0]!.schema_sha256,
  });
  assert.equal(response.data!.structuredOutputRequestByRowId, p);
});

test("the operator's outcomes view groups by model", async () => {
  const { rows } = await t.db.pool.query<{ model_config_id: string; provider: string; model: string; status: string; requests: string }>(
    `select model_config_id, provider, model, status::text, sum(requests)::text as requests from chat_private.request_outcomes_hourly
     where status <> 'pending' group by 1, 2, 3, 4 order by 1, 4`);
  assert.equal(rows, [
    { model_config_id: "other", provider: "openai-chat", model: "gpt-test", status: "failed", requests: "1" },
    { model_config_id: "scripted", provider: "scripted", model: "scripted-demo", status: "canceled", requests: "1" },
    { model_config_id: "scripted", provider: "scripted", model: "scripted-demo", status: "succeeded", requests: "2" },
  ]);
});

test.run();
