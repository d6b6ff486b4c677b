// The /v1 routes on the shared HTTP layer (src/api/http/), answered in OpenAI's error shape: the body cap at N and
// N + 1 bytes, the nesting depth at N and N + 1 levels, bytes that are not UTF-8, a bad percent-encoding in the
// path, JSON answers not cached, and the per-user stream cap that /api/chat uses too (CHATD_STREAMS_PER_USER=1
// here): a second SSE Response of the same user is a 429 with Retry-After before anything is created.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type OpenAI from "openai";
import { MAX_REQUEST_BYTES } from "../../src/api/preset.ts";
import { SCHEMA_MAX_JSON_DEPTH } from "../../src/structured/caps.ts";
import { waitFor } from "../support/worker.ts";
import { client, finalize, slowFinalize, startLiveStack, type LiveStack } from "./sdk.ts";

process.env.CHATD_STREAMS_PER_USER = "1";
const MAX_DEPTH = SCHEMA_MAX_JSON_DEPTH + 8;

let stack: LiveStack;
let alice: OpenAI;

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  alice = client(stack, stack.users.alice!.token);
});
test.after(() => stack.close());

function post(body: string | Buffer, path = "/v1/responses"): Promise<Response> {
  return fetch(`${stack.t.api.url}${path}`, { method: "POST", body,
    headers: { authorization: `Bearer ${stack.users.alice!.token}`, "content-type": "application/json" } });
}

/** A create body of exactly `bytes` bytes: padded with spaces after the JSON. */
function bodyOfSize(bytes: number): string {
  const json = JSON.stringify({ model: "scripted", background: true, input: finalize(`"padded"`) });
  return json + " ".repeat(bytes - Buffer.byteLength(json));
}

/** `reasoning` (accepted and ignored) nested so that the whole body is `depth` levels deep. */
function bodyOfDepth(depth: number): string {
  const nested = `${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}`;
  return `{"model":"scripted","background":true,"input":${JSON.stringify(finalize(`"deep"`))},"reasoning":${nested}}`;
}

test("the body cap: N bytes are read, N + 1 are a 413 in OpenAI's shape", async () => {
  const atCap = await post(bodyOfSize(MAX_REQUEST_BYTES));
  assert.is(atCap.status, 200, await atCap.clone().text());
  assert.is(atCap.headers.get("cache-control"), "no-store");
  const over = await post(bodyOfSize(MAX_REQUEST_BYTES + 1));
  assert.is(over.status, 413);
  assert.equal(await over.json(), { error: { message: `request bodies are limited to ${MAX_REQUEST_BYTES} bytes`,
    type: "invalid_request_error", param: null, code: "payload_too_large" } });
});

test("nesting: N levels are read, N + 1 are a 400 naming the field; bytes that are not UTF-8 are a 400", async () => {
  assert.is((await post(bodyOfDepth(MAX_DEPTH))).status, 200);
  const deep = await post(bodyOfDepth(MAX_DEPTH + 1));
  assert.is(deep.status, 400);
  const error = (await deep.json() as { error: { param: string; code: string } }).error;
  assert.is(error.code, "invalid_input");
  assert.match(error.param, /^reasoning(\[0\])+$/);
  const latin1 = await post(Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
  assert.is(latin1.status, 400);
  assert.is((await latin1.json() as { error: { code: string } }).error.code, "invalid_input");
  const badPath = await fetch(`${stack.t.api.url}/v1/responses/%E0%A4%A`, {
    headers: { authorization: `Bearer ${stack.users.alice!.token}` } });
  assert.is(badPath.status, 400);
});

test("streams: one per user here; the second is a 429 with Retry-After and creates nothing; the slot comes back", async () => {
  const first = await alice.responses.create({ model: "scripted", stream: true, input: slowFinalize(`"held"`, 60_000) });
  const iterator = first[Symbol.asyncIterator]();
  assert.is((await iterator.next()).value?.type, "response.created");
  const before = await stack.t.db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.chats");
  const second = await post(JSON.stringify({ model: "scripted", stream: true, input: finalize(`"refused"`) }));
  assert.is(second.status, 429);
  assert.is(second.headers.get("retry-after"), "1");
  assert.is((await second.json() as { error: { code: string } }).error.code, "too_many_streams");
  const after = await stack.t.db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.chats");
  assert.is(after.rows[0]!.n, before.rows[0]!.n);
  first.controller.abort();
  await waitFor("the first stream's slot to come back", async () => stack.t.api.openStreams() === 0);
  const third = await alice.responses.create({ model: "scripted", stream: true, input: finalize(`"again"`) });
  const types: string[] = [];
  for await (const event of third) types.push(event.type);
  assert.is(types.at(-1), "response.completed");
});

test.run();
