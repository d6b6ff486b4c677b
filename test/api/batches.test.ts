// Batches through the GraphQL API with the real worker in the same process (scripted provider and a mock provider
// server on 127.0.0.1, never live APIs): an invalid schema is refused at `createBatch` with a field error before
// anything is stored; a valid batch completes and its items and receipts (byte-exact) are readable by the owner
// and invisible to another user; another user's `cancelBatch` is refused and changes nothing, the owner's cancels.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { barrier, type Barrier, type MockProviderServer } from "../support/mock-providers/index.ts";
import { waitFor } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "./live-stack.ts";
import { envelope, textContent, type GraphQLResponse, type TestApi } from "./harness.ts";

const CREATE = `mutation($rf: String!, $items: JSON!, $model: String, $concurrency: Int, $name: String) {
  createBatch(input: {responseFormat: $rf, items: $items, modelConfigId: $model, concurrency: $concurrency, name: $name}) {
    result { rowId status totalItems } } }`;
const CANCEL = `mutation($id: UUID!) { cancelBatch(input: {batchId: $id}) { result { rowId status } } }`;
const BATCH = `query($id: UUID!) { batchByRowId(rowId: $id) { rowId status finishedAt
  itemCounts { pending running succeeded failed canceled } } }`;
const ITEMS = `query($id: UUID!) { allBatchItems(condition: {batchId: $id}, orderBy: LINE_ASC) { totalCount nodes {
  line status errorCode chatId structuredOutputRequestId
  structuredOutputRequestByStructuredOutputRequestId { status errorCode chatMessageByReceiptMessageId { structuredOutput { status valueJson } } } } } }`;

const SCHEMA = { type: "object", properties: { n: { type: "integer" }, d: { type: "number" } }, required: ["n", "d"], additionalProperties: false };

interface BatchView { rowId: string; status: string; finishedAt: string | null; itemCounts: Record<string, number> }
interface ItemView {
  line: number;
  status: string;
  errorCode: string | null;
  chatId: string | null;
  structuredOutputRequestId: string | null;
  structuredOutputRequestByStructuredOutputRequestId: { status: string; errorCode: string | null;
    chatMessageByReceiptMessageId: { structuredOutput: { status: string; valueJson: string | null } | null } | null } | null;
}

let t: TestApi;
let server: MockProviderServer;
let alice: { id: string; token: string };
let bob: { id: string; token: string };
let stack: LiveStack;
let barriers: Barrier[];

test.before(async () => {
  stack = await startLiveStack(["alice", "bob"]);
  ({ t, server, barriers } = stack);
  alice = stack.users.alice!;
  bob = stack.users.bob!;
});
test.after(() => stack.close());

async function gql<T>(query: string, variables: Record<string, unknown>, token: string): Promise<T> {
  const response = await t.gql<T>(query, variables, token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!;
}

function refusal(response: GraphQLResponse) {
  const error = response.errors?.[0];
  assert.ok(error, `expected an error, got ${JSON.stringify(response)}`);
  return { code: error.extensions?.code, fields: (error.extensions?.validations ?? []).map((v) => v.field) };
}

async function counts(): Promise<number[]> {
  const { rows } = await t.db.pool.query<{ batches: number; items: number; chats: number; jobs: number }>(
    `select (select count(*)::int from chat_public.batches) as batches, (select count(*)::int from chat_public.batch_items) as items,
            (select count(*)::int from chat_public.chats) as chats,
            (select count(*)::int from graphile_worker.jobs where task_identifier like 'batch%') as jobs`);
  const row = rows[0]!;
  return [row.batches, row.items, row.chats, row.jobs];
}

const script = (steps: object[]) => JSON.stringify({ script: steps });
const finalize = (raw: string) => script([{ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":${raw}}` }] }]);

test("createBatch with an invalid schema is refused with a field error and creates nothing", async () => {
  const before = await counts();
  const invalid = [
    ["$ref", envelope("item", { type: "object", $ref: "#/definitions/x" })],
    ["duplicate key in the schema text", '{"type":"json_schema","json_schema":{"name":"item","schema":{"type":"object","type":"array"}}}'],
  ] as const;
  for (const [label, rf] of invalid) {
    const response = await t.gql(CREATE, { rf, items: [{ line: 1, content: textContent("one") }], model: "scripted" }, alice.token);
    assert.equal(refusal(response), { code: "INVALID_RESPONSE_FORMAT", fields: ["response_format.json_schema.schema"] }, label);
    assert.is((response.data as { createBatch: unknown } | null | undefined)?.createBatch ?? null, null, label);
  }
  assert.equal(await counts(), before, "no batch, item, chat or job was created");
});

test("a valid batch (scripted provider) completes; the owner reads its items and receipts, another user sees none of it", async () => {
  const values = ['{"n": 12345678901234567890123, "d": 0.10000000000000000000000000001}', '{"n": 2, "d": 3.14159265358979323846264338327950288}', '{"n": -7, "d": 0.5}'];
  const items = values.map((value, i) => ({ line: i + 1, content: textContent(finalize(value)) }));
  const created = await gql<{ createBatch: { result: { rowId: string; status: string; totalItems: number } } }>(
    CREATE, { rf: envelope("item", SCHEMA), items, model: "scripted", concurrency: 2, name: "three" }, alice.token);
  const batchId = created.createBatch.result.rowId;
  assert.equal([created.createBatch.result.status, created.createBatch.result.totalItems], ["VALIDATING", 3]);

  const done = await waitFor("the batch to finish", async () => {
    const { batchByRowId } = await gql<{ batchByRowId: BatchView }>(BATCH, { id: batchId }, alice.token);
    return batchByRowId.finishedAt !== null ? batchByRowId : undefined;
  }, 60_000);
  assert.equal([done.status, done.itemCounts], ["COMPLETED", { pending: 0, running: 0, succeeded: 3, failed: 0, canceled: 0 }]);

  const { allBatchItems } = await gql<{ allBatchItems: { totalCount: number; nodes: ItemView[] } }>(ITEMS, { id: batchId }, alice.token);
  assert.is(allBatchItems.totalCount, 3);
  const { rows } = await t.db.pool.query<{ text: string }>("select (v::jsonb)::text as text from unnest($1::text[]) with ordinality u(v, n) order by n", [values]);
  assert.equal(allBatchItems.nodes.map((item) => [item.line, item.status, item.structuredOutputRequestByStructuredOutputRequestId?.status,
    item.structuredOutputRequestByStructuredOutputRequestId?.chatMessageByReceiptMessageId?.structuredOutput]),
  rows.map((row, i) => [i + 1, "SUCCEEDED", "SUCCEEDED", { status: "SUCCEEDED", valueJson: row.text }]), "receipts byte-exact, big numbers kept");
  const owned = await gql<{ allBatches: { nodes: { rowId: string }[] } }>(`{ allBatches { nodes { rowId } } }`, {}, alice.token);
  assert.ok(owned.allBatches.nodes.some((node) => node.rowId === batchId));

  const first = allBatchItems.nodes[0]!;
  const hidden = await gql<{ allBatches: { totalCount: number }; allBatchItems: { totalCount: number }; batchByRowId: unknown;
    batchItemByBatchIdAndLine: unknown; chatByRowId: unknown; structuredOutputRequestByRowId: unknown }>(
    `query($id: UUID!, $chat: UUID!, $request: UUID!) { allBatches { totalCount } allBatchItems { totalCount } batchByRowId(rowId: $id) { rowId }
      batchItemByBatchIdAndLine(batchId: $id, line: 1) { line } chatByRowId(rowId: $chat) { rowId }
      structuredOutputRequestByRowId(rowId: $request) { rowId } }`,
    { id: batchId, chat: first.chatId, request: first.structuredOutputRequestId }, bob.token);
  assert.equal(hidden, { allBatches: { totalCount: 0 }, allBatchItems: { totalCount: 0 }, batchByRowId: null, batchItemByBatchIdAndLine: null,
    chatByRowId: null, structuredOutputRequestByRowId: null });
});

test("(mock provider) cancelBatch by another user is refused and changes nothing; the owner's cancel ends the batch", async () => {
  const release = barrier();
  const reached = barrier();
  barriers.push(release);
  const from = server.requests.length;
  server.enqueue({ text: ["working"], hold: { afterEvents: 1, release: release.promise, reached: () => reached.resolve() } });
  const created = await gql<{ createBatch: { result: { rowId: string } } }>(CREATE, { rf: envelope("item", SCHEMA),
    items: [{ line: 1, content: textContent("first") }, { line: 2, content: textContent("second") }], model: "mock", concurrency: 1 }, alice.token);
  const batchId = created.createBatch.result.rowId;
  await reached.promise;
  const running = await waitFor("the first item to run", async () => {
    const { batchByRowId } = await gql<{ batchByRowId: BatchView }>(BATCH, { id: batchId }, alice.token);
    return batchByRowId.itemCounts.running === 1 ? batchByRowId : undefined;
  });
  assert.equal([running.status, running.itemCounts], ["RUNNING", { pending: 1, running: 1, succeeded: 0, failed: 0, canceled: 0 }]);

  const refused = await t.gql<{ cancelBatch: unknown }>(CANCEL, { id: batchId }, bob.token);
  assert.equal(refusal(refused), { code: "NOT_FOUND", fields: ["batch_id"] });
  assert.is(refused.data?.cancelBatch ?? null, null);
  const after = await gql<{ batchByRowId: BatchView }>(BATCH, { id: batchId }, alice.token);
  assert.equal(after.batchByRowId, running, "the batch is untouched");

  const canceled = await gql<{ cancelBatch: { result: { status: string } } }>(CANCEL, { id: batchId }, alice.token);
  assert.is(canceled.cancelBatch.result.status, "CANCELED");
  // The running item is interrupted while the provider still holds its response (released only afterwards).
  const ended = await waitFor("the canceled batch to finish", async () => {
    const { batchByRowId } = await gql<{ batchByRowId: BatchView }>(BATCH, { id: batchId }, alice.token);
    return batchByRowId.finishedAt !== null ? batchByRowId : undefined;
  });
  release.resolve();
  assert.equal([ended.status, ended.itemCounts], ["CANCELED", { pending: 0, running: 0, succeeded: 0, failed: 0, canceled: 2 }]);
  const { allBatchItems } = await gql<{ allBatchItems: { nodes: ItemView[] } }>(ITEMS, { id: batchId }, alice.token);
  assert.equal(allBatchItems.nodes.map((item) => [item.line, item.status, item.errorCode]),
    [[1, "CANCELED", "operator_canceled"], [2, "CANCELED", "batch_canceled"]]);
  assert.is(server.requests.length - from, 1, "the second item never started");
});

test.run();
