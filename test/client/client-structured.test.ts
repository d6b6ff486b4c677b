// client.structured against a live chatd (scripted provider): the envelope is built by the client, the receipt is
// awaited on the stream, exact numbers keep every digit, Standard Schemas (zod 4) are converted and applied, and
// refusals are typed errors carrying the server's code and validations.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { ChatdAuthError, ChatdRequestError, ChatdSchemaError, LosslessNumber } from "@chatd/client";
import { waitFor } from "../support/worker.ts";
import { finalize, script, startClientStack, type ClientStack } from "./stack.ts";

let stack: ClientStack;
test.before(async () => { stack = await startClientStack(); });
test.after(async () => { await stack.close(); });

const schema = {
  type: "object",
  properties: { id: { type: "integer" }, ratio: { type: "number" }, label: { type: "string" } },
  required: ["id", "ratio", "label"],
  additionalProperties: false,
} as const;
const BIG = '{"id": 12345678901234567890123, "ratio": 0.33333333333333333333333333, "label": "big"}';

test("a JSON Schema request resolves with the receipt; numbers: exact keeps every digit", async () => {
  const client = stack.client();
  const result = await client.structured({ prompt: script(finalize(BIG)), schema, numbers: "exact" });
  assert.is(result.status, "succeeded", JSON.stringify(result.error));
  if (result.status !== "succeeded") return;
  assert.ok(result.valueJson.includes("12345678901234567890123"), result.valueJson);
  assert.is(result.value.id, 12345678901234567890123n);
  assert.ok(result.value.ratio instanceof LosslessNumber);
  assert.is(result.value.ratio.toString(), "0.33333333333333333333333333");
  const label: string = result.value.label; // typed from the `as const` JSON Schema
  assert.is(label, "big");
  assert.is(result.error, null);
  const { rows } = await stack.live.t.db.pool.query<{ id: string }>(
    "select id::text from chat_public.structured_output_requests where id = $1 and status = 'succeeded'", [result.requestId]);
  assert.is(rows.length, 1, "the request the result names succeeded in the database");
});

test("without numbers: exact, values are plain JSON numbers (big ones rounded, valueJson exact)", async () => {
  const result = await stack.client().structured({ prompt: script(finalize(BIG)), schema });
  assert.is(result.status, "succeeded");
  if (result.status !== "succeeded") return;
  assert.is(typeof result.value.id, "number");
  assert.ok(result.valueJson.includes("12345678901234567890123"));
});

test("a zod 4 schema is sent as draft-07 JSON Schema and its output (transforms included) is the value", async () => {
  const Report = z.object({ files: z.number().int(), names: z.array(z.string()).transform((names) => names.join(",")) });
  const client = stack.client();
  const result = await client.structured({ prompt: script(finalize('{"files": 2, "names": ["a", "b"]}')), schema: Report, name: "report" });
  assert.is(result.status, "succeeded", JSON.stringify(result));
  if (result.status !== "succeeded") return;
  const files: number = result.value.files;
  const names: string = result.value.names;
  assert.equal({ files, names }, { files: 2, names: "a,b" });
  const { rows } = await stack.live.t.db.pool.query<{ name: string; schema: Record<string, unknown> }>(
    "select name, schema from chat_public.structured_output_requests where id = $1", [result.requestId]);
  assert.is(rows[0]!.name, "report");
  assert.equal((rows[0]!.schema.properties as Record<string, unknown>).names, { type: "array", items: { type: "string" } });
});

test("a request whose model never submits resolves as failed with the receipt's code", async () => {
  const result = await stack.client().structured({ prompt: script({ text: "no structured output" }), schema });
  assert.is(result.status, "failed", JSON.stringify(result));
  assert.is(result.value, null);
  assert.is(result.valueJson, null);
  assert.type(result.error?.code, "string");
  const { rows } = await stack.live.t.db.pool.query<{ error_code: string }>(
    "select error_code from chat_public.structured_output_requests where id = $1", [result.requestId]);
  assert.is(result.error!.code, rows[0]!.error_code);
});

test("an interrupted request resolves as canceled with the receipt's code", async () => {
  const client = stack.client();
  const pending = client.structured({ prompt: JSON.stringify({ marker: "cancel-me", script: [{ delay_ms: 60_000, text: "late" }] }), schema });
  // Barrier: the worker holds this chat's step.
  const chatId = await waitFor("the chat to run", async () => {
    const { rows } = await stack.live.t.db.pool.query<{ id: string }>(
      `select c.id from chat_public.chats c join chat_private.chat_leases l on l.chat_id = c.id
       where c.status = 'running' and exists (select 1 from chat_public.chat_messages m where m.chat_id = c.id and m.content::text like '%cancel-me%')`);
    return rows[0]?.id;
  });
  await client.chats.interrupt(chatId);
  const result = await pending;
  assert.equal([result.chatId, result.status, result.error?.code, result.value], [chatId, "canceled", "interrupted", null]);
});

test("a request sent to an existing chat waits for its own receipt, not an earlier one", async () => {
  const client = stack.client();
  const first = await client.structured({ prompt: script(finalize('{"id": 1, "ratio": 0.5, "label": "first"}')), schema });
  const second = await client.structured({ chatId: first.chatId, prompt: script(finalize('{"id": 2, "ratio": 0.25, "label": "second"}')), schema });
  assert.is(second.chatId, first.chatId);
  assert.is.not(second.requestId, first.requestId);
  assert.is(second.status === "succeeded" && second.value.label, "second");
});

test("refusals are typed: an invalid schema carries the server's code and validations; a bad token is ChatdAuthError", async () => {
  const client = stack.client();
  try {
    await client.structured({ prompt: "x", schema: { type: "object", properties: { a: { type: "no-such-type" } } } as never });
    assert.unreachable("an invalid schema is refused");
  } catch (error) {
    assert.instance(error, ChatdRequestError);
    assert.is((error as ChatdRequestError).code, "INVALID_RESPONSE_FORMAT");
    assert.ok((error as ChatdRequestError).validations.length > 0);
    assert.ok((error as ChatdRequestError).validations[0]!.field.startsWith("response_format"), JSON.stringify((error as ChatdRequestError).validations));
  }
  try {
    await stack.client({ token: "not-a-token" }).structured({ prompt: "x", schema });
    assert.unreachable("a bad token is refused");
  } catch (error) {
    assert.instance(error, ChatdAuthError);
    assert.is((error as ChatdAuthError).code, "UNAUTHENTICATED");
  }
  try {
    await client.structured({ prompt: "x", schema: 42 as never });
    assert.unreachable("a schema that is no object is refused on the client");
  } catch (error) {
    assert.instance(error, ChatdSchemaError);
    assert.is((error as ChatdSchemaError).code, "INVALID_SCHEMA");
  }
});

test.run();
