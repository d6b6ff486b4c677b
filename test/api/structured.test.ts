// Structured requests through the API: edit semantics (omitted/null preserves under a fresh id, text clears, a new
// schema replaces), the experiment gate (TS and SQL refuse identically; accepted work finishes and stays
// readable), and receipts read back byte-exact in `valueJson`, with a JSON null value distinct from no value.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { refusalError } from "../../src/api/errors.ts";
import { acquire, commitCandidate, finishTurn, text as sqlText } from "../support/chats.ts";
import { envelope, startTestApi, textContent, type GraphQLResponse, type TestApi } from "./harness.ts";

const CREATE = `mutation($content: JSON!, $rf: String) { createChat(input: {content: $content, responseFormat: $rf}) {
  result { chatId messageId structuredOutputRequestId } } }`;
const SEND = `mutation($chatId: UUID!, $content: JSON!, $rf: String) { sendChatMessage(input: {chatId: $chatId, content: $content, responseFormat: $rf}) {
  result { messageId queuedMessageId structuredOutputRequestId } } }`;
const EDIT_OMITTED = `mutation($id: BigInt!, $content: JSON!) { editChatMessage(input: {messageId: $id, content: $content}) {
  result { messageId structuredOutputRequestId structuredOutputRequest { schemaSha256 name } receipts { rowId structuredOutput { status error { code } } } } } }`;
const EDIT = `mutation($id: BigInt!, $content: JSON!, $rf: String) { editChatMessage(input: {messageId: $id, content: $content, responseFormat: $rf}) {
  result { messageId structuredOutputRequestId structuredOutputRequest { schemaSha256 name } } } }`;
const RECEIPTS = `query($id: UUID!) { chatByRowId(rowId: $id) { messages { nodes { rowId kind structuredOutputRequestId
  structuredOutput { requestId status value valueJson error { code message } } } } } }`;

type Result = { messageId: string; structuredOutputRequestId: string | null; structuredOutputRequest: { schemaSha256: string; name: string } | null };

let t: TestApi;
let alice: { id: string; token: string };

const setExperiment = (enabled: boolean) =>
  t.db.pool.query("update chat_private.experiments set enabled = $1 where name = 'chat-structured-output'", [enabled]);

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
});
test.after(async () => { await t.close(); });
test.before.each(async () => { await setExperiment(true); });

async function create(rf: string | null) {
  const response = await t.gql<{ createChat: { result: { chatId: string; messageId: string; structuredOutputRequestId: string | null } } }>(
    CREATE, { content: textContent("start"), rf }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.createChat.result;
}

async function edit(messageId: string, rf?: string | null): Promise<Result> {
  const response = rf === undefined
    ? await t.gql<{ editChatMessage: { result: Result } }>(EDIT_OMITTED, { id: messageId, content: textContent("edited") }, alice.token)
    : await t.gql<{ editChatMessage: { result: Result } }>(EDIT, { id: messageId, content: textContent("edited"), rf }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.editChatMessage.result;
}

test("edit: omitted or null preserves under a fresh id, text clears, a new schema replaces", async () => {
  const first = await create(envelope("report", { type: "object", properties: { n: { type: "integer" } } }));
  const { rows } = await t.db.pool.query<{ schema_sha256: string }>(
    "select schema_sha256 from chat_public.structured_output_requests where id = $1", [first.structuredOutputRequestId]);
  const sha = rows[0]!.schema_sha256;
  const omitted = await edit(first.messageId);
  assert.ok(omitted.structuredOutputRequestId && omitted.structuredOutputRequestId !== first.structuredOutputRequestId);
  assert.equal(omitted.structuredOutputRequest, { schemaSha256: sha, name: "report" });
  const explicitNull = await edit(omitted.messageId, null);
  assert.ok(explicitNull.structuredOutputRequestId && explicitNull.structuredOutputRequestId !== omitted.structuredOutputRequestId);
  assert.is(explicitNull.structuredOutputRequest?.schemaSha256, sha);
  const cleared = await edit(explicitNull.messageId, '{"type":"text"}');
  assert.is(cleared.structuredOutputRequestId, null);
  const stillText = await edit(cleared.messageId);
  assert.is(stillText.structuredOutputRequestId, null);
  const replaced = await edit(stillText.messageId, envelope("other", { type: "array" }));
  assert.is(replaced.structuredOutputRequest?.name, "other");
  assert.ok(replaced.structuredOutputRequest?.schemaSha256 !== sha);
  const superseded = await t.db.pool.query<{ n: string }>(
    "select count(*) as n from chat_public.structured_output_requests where status = 'canceled' and error_code = 'superseded'");
  assert.is(superseded.rows[0]!.n, "3");
});

test("experiment off: structured create/send/edit refused with the same error SQL raises; text works", async () => {
  const accepted = await create(envelope());
  await setExperiment(false);
  const expected = { message: "structured output is disabled on this server (experiment chat-structured-output)",
    extensions: { code: "STRUCTURED_OUTPUT_DISABLED", validations: [{ field: "response_format",
      detail: "structured output is disabled on this server (experiment chat-structured-output)" }] } };
  const check = (response: GraphQLResponse, label: string) => {
    const error = response.errors?.[0];
    assert.equal({ message: error?.message, extensions: error?.extensions }, expected, label);
  };
  const before = await t.db.pool.query("select count(*) from chat_public.structured_output_requests");
  check(await t.gql(CREATE, { content: textContent("x"), rf: envelope() }, alice.token), "create");
  check(await t.gql(SEND, { chatId: accepted.chatId, content: textContent("x"), rf: envelope() }, alice.token), "send");
  check(await t.gql(EDIT_OMITTED, { id: accepted.messageId, content: textContent("x") }, alice.token), "edit preserving");
  check(await t.gql(EDIT, { id: accepted.messageId, content: textContent("x"), rf: envelope("n") }, alice.token), "edit replacing");
  const after = await t.db.pool.query("select count(*) from chat_public.structured_output_requests");
  assert.equal(after.rows, before.rows);
  // The same refusal raised by SQL itself (a raw call skips the TypeScript gate) maps to the same GraphQL error.
  const sqlError = await t.db.as("chat_user", alice.id, (client) =>
    client.query("select chat_public.create_chat($1, $2)", [sqlText("x"), envelope()])).then(() => null, (error: unknown) => error);
  const pgError = sqlError as { code: string; message: string; column?: string; detail?: string };
  const mapped = refusalError({ sqlState: pgError.code, message: pgError.message, column: pgError.column, detail: pgError.detail });
  assert.equal({ message: mapped?.message, extensions: mapped?.extensions }, expected);
  const plain = await t.gql<{ createChat: { result: { chatId: string } } }>(CREATE, { content: textContent("plain") }, alice.token);
  assert.not.ok(plain.errors);
  const sent = await t.gql(SEND, { chatId: plain.data!.createChat.result.chatId, content: textContent("more"), rf: '{"type":"text"}' }, alice.token);
  assert.not.ok(sent.errors);
  // Work accepted before the switch still finishes and its receipt is readable.
  const fence = await commitCandidate(t.db, await acquire(t.db, accepted.chatId), '{"ok": true}');
  assert.is(await finishTurn(t.db, fence), "waiting");
  const read = await t.gql<{ chatByRowId: { messages: { nodes: { kind: string; structuredOutput: { status: string; valueJson: string } | null }[] } } }>(
    RECEIPTS, { id: accepted.chatId }, alice.token);
  const receipt = read.data!.chatByRowId.messages.nodes.find((node) => node.kind === "RECEIPT");
  assert.equal(receipt?.structuredOutput && { status: receipt.structuredOutput.status, valueJson: receipt.structuredOutput.valueJson },
    { status: "SUCCEEDED", valueJson: '{"ok": true}' });
});

test("valueJson is the exact stored text: big integers and long decimals keep every digit; null is a value", async () => {
  const valueText = '{"big": 123456789012345678901234567890, "n": 9007199254740993, "dec": 0.100000000000000000000000000000000001, "neg": -1e-30}';
  const { rows } = await t.db.pool.query<{ text: string }>("select ($1::jsonb)::text as text", [valueText]);
  const exact = rows[0]!.text;
  const big = await create(envelope());
  await finishTurn(t.db, await commitCandidate(t.db, await acquire(t.db, big.chatId), valueText));
  const nul = await create(envelope());
  await finishTurn(t.db, await commitCandidate(t.db, await acquire(t.db, nul.chatId), "null"));
  const failed = await create(envelope());
  await finishTurn(t.db, await acquire(t.db, failed.chatId), { status: "failed", code: "not_produced" });
  type Output = { requestId: string; status: string; value: unknown; valueJson: string | null; error: { code: string; message: string } | null };
  const receiptOf = async (chatId: string) => {
    const response = await t.gql<{ chatByRowId: { messages: { nodes: { kind: string; structuredOutputRequestId: string; structuredOutput: Output | null }[] } } }>(
      RECEIPTS, { id: chatId }, alice.token);
    const nodes = response.data!.chatByRowId.messages.nodes;
    assert.ok(nodes.filter((node) => node.kind !== "RECEIPT").every((node) => node.structuredOutput === null), "only receipts carry results");
    return nodes.find((node) => node.kind === "RECEIPT")!;
  };
  const bigReceipt = await receiptOf(big.chatId);
  assert.is(bigReceipt.structuredOutput!.valueJson, exact);
  assert.ok(exact.includes("123456789012345678901234567890") && exact.includes("9007199254740993") && exact.includes("0.100000000000000000000000000000000001"));
  assert.is(bigReceipt.structuredOutput!.requestId, big.structuredOutputRequestId);
  assert.is(bigReceipt.structuredOutputRequestId, big.structuredOutputRequestId);
  const nullReceipt = await receiptOf(nul.chatId);
  assert.equal({ ...nullReceipt.structuredOutput!, requestId: null }, { requestId: null, status: "SUCCEEDED", value: null, valueJson: "null", error: null });
  const failedReceipt = await receiptOf(failed.chatId);
  assert.is(failedReceipt.structuredOutput!.valueJson, null);
  assert.is(failedReceipt.structuredOutput!.status, "FAILED");
  assert.is(failedReceipt.structuredOutput!.error?.code, "not_produced");
  const byId = await t.gql<{ structuredOutputRequestByRowId: { status: string; receiptMessageId: string } }>(
    `query($id: UUID!) { structuredOutputRequestByRowId(rowId: $id) { status receiptMessageId } }`, { id: nul.structuredOutputRequestId }, alice.token);
  assert.equal(byId.data!.structuredOutputRequestByRowId, { status: "SUCCEEDED", receiptMessageId: (await receiptOf(nul.chatId)).structuredOutput && byId.data!.structuredOutputRequestByRowId.receiptMessageId });
});

test.run();
