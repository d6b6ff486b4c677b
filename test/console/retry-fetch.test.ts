// The console's useChat transport sends a POST /api/chat again, with the same body (so the same idempotency keys,
// derived from the useChat chat and message ids), when it got no answer or an UNAVAILABLE one; a refusal or an
// abort is not retried, and the attempts are bounded (8: tested at 8 failures and at 7).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { retryingFetch } from "../../console/src/retry-fetch.ts";

type Answer = Error | Response;

function scripted(answers: Answer[]) {
  const bodies: unknown[] = [];
  const fake: typeof fetch = async (_input, init) => {
    bodies.push(init?.body);
    const answer = answers.shift();
    if (answer == null) throw new Error("no more answers");
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch: retryingFetch(fake, async () => undefined), bodies };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const unavailable = () => json(422, { error: { code: "UNAVAILABLE", message: "the database is unavailable" } });
const cut = () => new TypeError("fetch failed");
const BODY = JSON.stringify({ id: "chat-1", messages: [{ id: "m-1", role: "user", parts: [{ type: "text", text: "hi" }] }] });

test("a cut connection and an UNAVAILABLE answer are sent again with the same body", async () => {
  const { fetch, bodies } = scripted([cut(), unavailable(), new Response("stream", { status: 200 })]);
  const response = await fetch("/api/chat", { method: "POST", body: BODY });
  assert.is(response.status, 200);
  assert.equal(bodies, [BODY, BODY, BODY]);
});

test("a refusal is returned at once", async () => {
  const { fetch, bodies } = scripted([json(404, { error: { code: "NOT_FOUND", message: "chat not found" } })]);
  assert.is((await fetch("/api/chat", { method: "POST", body: BODY })).status, 404);
  assert.is(bodies.length, 1);
});

test("an aborted send is not retried", async () => {
  const controller = new AbortController();
  controller.abort();
  const { fetch, bodies } = scripted([new DOMException("aborted", "AbortError")]);
  await fetch("/api/chat", { method: "POST", body: BODY, signal: controller.signal })
    .then(() => assert.unreachable("thrown"), (error: Error) => assert.is(error.name, "AbortError"));
  assert.is(bodies.length, 1);
});

test("at most 8 attempts: 7 failures then an answer succeed; 8 failures give the last one", async () => {
  const seven = scripted([...Array.from({ length: 7 }, cut), new Response("ok")]);
  assert.is((await seven.fetch("/api/chat", { method: "POST", body: BODY })).status, 200);
  const eight = scripted([...Array.from({ length: 7 }, unavailable), unavailable(), new Response("never")]);
  const last = await eight.fetch("/api/chat", { method: "POST", body: BODY });
  assert.is((await last.json() as { error: { code: string } }).error.code, "UNAVAILABLE");
  assert.is(eight.bodies.length, 8);
});

test.run();
