// Unit tests of the client's pieces that need no server: exact number parsing, schema conversion, the AI SDK prompt
// mapping, error classes, and the event iterator's reconnect bookkeeping against a scripted transport.
import * as fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { ChatdAuthError, ChatdNetworkError, ChatdRequestError, ChatdSchemaError, requestError } from "../../client/src/errors.ts";
import { chatEvents } from "../../client/src/events.ts";
import { LosslessNumber, parseExact } from "../../client/src/exact-json.ts";
import { toJsonSchema } from "../../client/src/schema.ts";
import { envelopeText } from "../../client/src/structured.ts";
import type { SubscriptionSink, Transport } from "../../client/src/transport.ts";
import { promptContent, toolResult, trailingToolResults } from "../../client/src/ai-sdk/prompt.ts";

test("parseExact: safe numbers stay numbers, big integers are bigints, other lossy numbers keep their text", () => {
  const value = parseExact('{"a": 1, "b": 0.5, "c": 12345678901234567890123, "d": 0.1000000000000000055511151231257827, "e": [9007199254740993]}');
  assert.equal(value, { a: 1, b: 0.5, c: 12345678901234567890123n, d: new LosslessNumber("0.1000000000000000055511151231257827"), e: [9007199254740993n] });
  fc.assert(fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (n) => {
    const parsed = parseExact(`[${n}]`) as [number | bigint];
    return BigInt(parsed[0]) === n;
  }));
});

test("toJsonSchema: JSON Schema as is; zod 4 as draft-07; a schema that cannot describe itself is a ChatdSchemaError", () => {
  const plain = { type: "object", properties: { a: { type: "string" } } };
  assert.is(toJsonSchema(plain), plain);
  const converted = toJsonSchema(z.object({ a: z.string(), n: z.number().optional() }));
  assert.is(converted.$schema, "http://json-schema.org/draft-07/schema#");
  assert.equal(converted.required, ["a"]);
  const opaque = { "~standard": { version: 1, vendor: "opaque", validate: () => ({ value: 1 }) } } as const;
  try {
    toJsonSchema(opaque);
    assert.unreachable("no JSON Schema for it");
  } catch (error) {
    assert.instance(error, ChatdSchemaError);
    assert.is((error as ChatdSchemaError).code, "INVALID_SCHEMA");
  }
  assert.throws(() => toJsonSchema([] as never), (error: unknown) => error instanceof ChatdSchemaError);
});

test("envelopeText: the response_format envelope as JSON text", () => {
  assert.equal(JSON.parse(envelopeText({ type: "object" }, "report", "why")),
    { type: "json_schema", json_schema: { name: "report", description: "why", schema: { type: "object" } } });
  assert.not.ok("description" in JSON.parse(envelopeText({})).json_schema);
});

test("requestError: UNAUTHENTICATED is ChatdAuthError; others carry code and validations", () => {
  assert.instance(requestError([{ message: "no", extensions: { code: "UNAUTHENTICATED" } }]), ChatdAuthError);
  const error = requestError([{ message: "bad", extensions: { code: "INVALID_INPUT", validations: [{ field: "content", detail: "x" }] } }]);
  assert.instance(error, ChatdRequestError);
  assert.not.instance(error, ChatdAuthError);
  assert.equal([error.code, error.validations], ["INVALID_INPUT", [{ field: "content", detail: "x" }]]);
});

test("prompt mapping: one user message keeps its parts; a longer prompt is labelled; trailing tool results map to chatd's", () => {
  const warnings: unknown[] = [];
  assert.equal(promptContent([{ role: "user", content: [{ type: "text", text: "hi" }] }], warnings as never), [{ type: "text", text: "hi" }]);
  assert.equal(promptContent([{ role: "system", content: "be brief" }, { role: "user", content: [{ type: "text", text: "hi" }] }], warnings as never),
    [{ type: "text", text: "[system] be brief" }, { type: "text", text: "[user] hi" }]);
  assert.equal(warnings, []);
  const prompt = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "t", output: { type: "json", value: { ok: 1 } } },
      { type: "tool-result", toolCallId: "c2", toolName: "t", output: { type: "error-text", value: "boom" } }] },
  ] as never;
  assert.equal(trailingToolResults(prompt).map(toolResult),
    [{ toolCallId: "c1", result: { ok: 1 } }, { toolCallId: "c2", result: "boom", isError: true }]);
  assert.equal(trailingToolResults([{ role: "user", content: [] }] as never), []);
});

/** A transport whose subscriptions are answered by `script(n, variables, sink)` for the n-th subscription. */
function scriptedTransport(script: (n: number, variables: Record<string, unknown>, sink: SubscriptionSink<unknown>) => void) {
  const subscriptions: Record<string, unknown>[] = [];
  const transport = {
    subscribe(_query: string, variables: Record<string, unknown>, sink: SubscriptionSink<unknown>) {
      subscriptions.push(variables);
      queueMicrotask(() => script(subscriptions.length - 1, variables, sink));
      return () => {};
    },
  } as unknown as Transport;
  return { transport, subscriptions };
}

const message = (rowId: string) => ({ data: { chatEvents: { type: "message", chatId: "c", snapshotVersion: "1", historyVersion: "1",
  generationAttempt: "0", message: { rowId, chatId: "c", role: "ASSISTANT", kind: "MESSAGE", visibility: "BOTH", content: [] } } } });

test("events: after a drop it resubscribes from the last id it yielded and drops what it already yielded", async () => {
  const { transport, subscriptions } = scriptedTransport((n, _variables, sink) => {
    if (n === 0) {
      for (const id of ["9", "10"]) sink.next(message(id));
      sink.error({ code: 1006, reason: "dropped" });
    } else {
      // A server replaying too much must not make the client repeat itself.
      for (const id of ["10", "11"]) sink.next(message(id));
    }
  });
  const ids: string[] = [];
  const types: string[] = [];
  for await (const event of chatEvents(transport, "c", { afterMessageId: "8" })) {
    types.push(event.type);
    if (event.message) ids.push(event.message.rowId);
    if (ids.length === 3) break;
  }
  assert.equal(ids, ["9", "10", "11"]);
  assert.equal(subscriptions.map((v) => v.after), ["8", "10"]);
  assert.equal(types, ["message", "message", "previewReset", "message"]);
});

test("events: STREAM_INTERRUPTED and UNAVAILABLE reconnect; another GraphQL error ends the iteration with it; maxReconnects bounds failures", async () => {
  const { transport, subscriptions } = scriptedTransport((n, _variables, sink) => {
    if (n === 0) sink.next({ errors: [{ message: "interrupted", extensions: { code: "STREAM_INTERRUPTED" } }] });
    else if (n === 1) sink.error([{ message: "database failing over", extensions: { code: "UNAVAILABLE" } }]);
    else sink.error([{ message: "chat not found", extensions: { code: "NOT_FOUND" } }]);
  });
  try {
    for await (const _event of chatEvents(transport, "c")) assert.unreachable("no events");
    assert.unreachable("the refusal ends the stream");
  } catch (error) {
    assert.instance(error, ChatdRequestError);
    assert.is((error as ChatdRequestError).code, "NOT_FOUND");
  }
  assert.is(subscriptions.length, 3, "two reconnects before the refusal");
  const dropping = scriptedTransport((_n, _variables, sink) => sink.error({ code: 1006 }));
  try {
    for await (const _event of chatEvents(dropping.transport, "c", { maxReconnects: 1 })) assert.unreachable("no events");
  } catch (error) {
    assert.is((error as { code?: string }).code, "NETWORK");
  }
  assert.is(dropping.subscriptions.length, 2, "one attempt and one reconnect");
});

test("events: without a WebSocket implementation the iteration ends at once with ChatdNetworkError", async () => {
  const { Transport } = await import("../../client/src/transport.ts");
  const transport = new Transport({ url: "http://127.0.0.1:9/graphql" });
  Object.defineProperty(transport, "webSocketImpl", { value: undefined });
  try {
    for await (const _event of chatEvents(transport, "c", { maxReconnects: 2 })) assert.unreachable("no events");
    assert.unreachable("it ends");
  } catch (error) {
    assert.instance(error, ChatdNetworkError);
    assert.match((error as Error).message, "no WebSocket implementation", "not retried");
  }
});

test.run();
