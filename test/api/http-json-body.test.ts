// The shared HTTP body reader (src/api/http/json-body.ts): size, UTF-8, nesting and surrogates, each a typed 4xx
// naming the field, each limit tried at N and N+1; and the error mapper's shape.
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { HttpError } from "../../src/api/http/errors.ts";
import { readJsonBody } from "../../src/api/http/json-body.ts";

function request(body: string | Buffer, headers: Record<string, string> = {}): IncomingMessage {
  const stream = Readable.from([typeof body === "string" ? Buffer.from(body) : body]) as unknown as IncomingMessage;
  (stream as { headers: Record<string, string> }).headers = headers;
  return stream;
}

async function refusal(body: string | Buffer, limits = { maxBytes: 1024, maxDepth: 4 }): Promise<HttpError> {
  try {
    await readJsonBody(request(body), limits);
  } catch (error) {
    assert.instance(error, HttpError);
    return error as HttpError;
  }
  throw new Error(`accepted ${String(body).slice(0, 80)}`);
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

test("size: a body of maxBytes is read, one byte more is 413 PAYLOAD_TOO_LARGE (also when Content-Length says so)", async () => {
  const exact = JSON.stringify("x".repeat(1024 - 2));
  assert.is((await readJsonBody(request(exact), { maxBytes: 1024, maxDepth: 4 })) as string, "x".repeat(1022));
  const over = await refusal(JSON.stringify("x".repeat(1023)));
  assert.equal([over.status, over.code, over.validations[0]?.field], [413, "PAYLOAD_TOO_LARGE", "body"]);
  try {
    await readJsonBody(request("{}", { "content-length": "1025" }), { maxBytes: 1024, maxDepth: 4 });
    assert.unreachable();
  } catch (error) {
    assert.is((error as HttpError).status, 413);
  }
});

test("depth: maxDepth levels are read, maxDepth + 1 is 400 naming where; 100,000 levels fail the same way", async () => {
  assert.ok(await readJsonBody(request(nested(4)), { maxBytes: 1024, maxDepth: 4 }));
  const over = await refusal(nested(5));
  assert.equal([over.status, over.code, over.validations[0]], [400, "INVALID_INPUT", { field: "[0][0][0][0]", detail: "nests deeper than 4 levels" }]);
  const deep = `{"dynamicTools":[{"inputSchema":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}]}`;
  const refused = await refusal(deep, { maxBytes: 2_000_000, maxDepth: 10 });
  assert.is(refused.validations[0]!.field, "dynamicTools[0].inputSchema.a.a.a.a.a.a.a", "the first object at depth 11");
});

test("encoding: a lone surrogate escape in a value or a key, and bytes that are not UTF-8, are 400 naming the field", async () => {
  const lone = await refusal('{"messages":[{"parts":[{"text":"a\\ud800b"}]}]}', { maxBytes: 1024, maxDepth: 8 });
  assert.equal([lone.status, lone.code, lone.validations[0]!.field], [400, "INVALID_INPUT", "messages[0].parts[0].text"]);
  const low = await refusal('["\\udc00"]');
  assert.is(low.validations[0]!.field, "[0]");
  const key = await refusal('{"a":{"\\ud800":1}}');
  assert.equal(key.validations[0], { field: "a", detail: "has a key with an unpaired UTF-16 surrogate" });
  const pair = await readJsonBody(request('["\\ud83d\\ude00"]'), { maxBytes: 1024, maxDepth: 4 });
  assert.equal(pair, ["😀"], "a surrogate pair is a character");
  const bytes = await refusal(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
  assert.equal([bytes.status, bytes.validations[0]!.field], [400, "body"]);
  const notJson = await refusal("{");
  assert.equal([notJson.status, notJson.validations[0]], [400, { field: "body", detail: "is not JSON" }]);
});

test("fast-check: any bytes are a value or a typed 4xx, never another error", async () => {
  await fc.assert(fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    fc.json({ maxDepth: 8 }).map((text) => Buffer.from(text)),
    fc.string({ unit: "binary" }).map((text) => Buffer.from(JSON.stringify(text)))), async (body) => {
    try {
      await readJsonBody(request(body), { maxBytes: 1024, maxDepth: 4 });
    } catch (error) {
      assert.instance(error, HttpError);
      const { status } = error as HttpError;
      assert.ok(status === 400 || status === 413, String(status));
    }
  }), { numRuns: 500 });
});

test.run();
