// Retries and interrupts against the mock provider servers (mock providers, not live APIs). Concurrency is
// driven by barriers: the mock server holds a response until the test has observed the state in between.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, interrupt } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import {
  addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, messages, MOCK_KEY, shape, startTestWorker, turn,
  waitFor, waitForStatus,
} from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let user: string;
const signals: AbortSignal[] = [];

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  server = await startMockProvider();
  await addModelConfig(db, "chat", "openai-chat", server.url);
  await addModelConfig(db, "claude", "anthropic", server.url);
  worker = await startTestWorker(db, await makeWorkspaces(), {
    // Records each provider request's abort signal, to prove an interrupt aborts the HTTP request.
    modelRuntime: { fetch: (input, init) => {
      if (init?.signal != null) signals.push(init.signal);
      return fetch(input, init);
    } },
  });
  user = await createUser(db, "carol");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

async function retryState(chatId: string): Promise<Record<string, unknown> | null> {
  const { rows } = await db.pool.query("select retry_state from chat_public.chats where id = $1", [chatId]);
  return rows[0].retry_state;
}

test("429 then success (mock openai-chat): the retry state is visible while waiting, cleared after", async () => {
  const reached = barrier();
  const release = barrier();
  server.enqueue(
    { kind: "http-error", status: 429, body: { error: { message: "slow down SECRET-BODY" } } },
    { text: ["fine"], hold: { afterEvents: 0, release: release.promise, reached: reached.resolve } },
  );
  const chat = await createWorkerChat(db, user, "hi", { model: "chat", workspace: null });
  await reached.promise;
  const state = await retryState(chat);
  assert.equal({ attempt: state?.attempt, max: state?.max_attempts, error: state?.error },
    { attempt: 1, max: 5, error: { kind: "rate_limit", status: 429, message: "provider error: rate_limit (HTTP 429)" } });
  release.resolve();
  await waitForStatus(db, chat, "waiting");
  assert.is(await retryState(chat), null);
  const rows = await messages(db, chat);
  assert.equal(shape(rows), ["user:text", "assistant:text"]);
  assert.is(rows[1]!.finish?.attempts, 2);
});

test("5 retryable failures (mock anthropic overloaded): retry state per attempt, then a sanitized terminal error", async () => {
  const holds = Array.from({ length: 5 }, () => ({ reached: barrier(), release: barrier() }));
  for (const h of holds) {
    server.enqueue({
      text: ["partial"],
      toolCalls: [{ id: "t1", name: "read_file", fragments: ['{"path":'] }],
      streamError: { type: "overloaded_error", message: `Overloaded SECRET-BODY ${MOCK_KEY}` },
      hold: { afterEvents: 0, release: h.release.promise, reached: h.reached.resolve },
    });
  }
  const chat = await createWorkerChat(db, user, "hi", { model: "claude" });
  for (let i = 0; i < holds.length; i++) {
    await holds[i]!.reached.promise;
    const state = await retryState(chat);
    if (i === 0) assert.is(state, null);
    else assert.equal({ attempt: state?.attempt, kind: (state?.error as { kind: string }).kind }, { attempt: i, kind: "overloaded" });
    holds[i]!.release.resolve();
  }
  await waitForStatus(db, chat, "error");
  const { rows } = await db.pool.query("select last_error, retry_state from chat_public.chats where id = $1", [chat]);
  assert.equal(rows[0].last_error, { kind: "provider_error", message: "provider error: overloaded (HTTP 529); gave up after 5 attempts" });
  assert.is(rows[0].retry_state, null);
  const all = await messages(db, chat);
  assert.equal(shape(all), ["user:text", "assistant:text"]);
  const failed = all[1]!;
  assert.equal({ reason: failed.finish?.reason, attempts: failed.finish?.attempts, kind: failed.finish?.error?.kind },
    { reason: "error", attempts: 5, kind: "overloaded" });
  assert.is((failed.finish?.dropped_tool_calls as unknown[]).length, 1, "the incomplete call was not executed");
  const everything = JSON.stringify({ all, last: rows[0] });
  assert.not.ok(everything.includes("SECRET"));
});

test("a terminal error (400) ends the turn at once, sanitized", async () => {
  server.enqueue({ kind: "http-error", status: 400, body: { error: { message: 'bad schema {"secret": 1} SECRET-BODY' } } });
  const chat = await createWorkerChat(db, user, "hi", { model: "chat", workspace: null });
  await waitForStatus(db, chat, "error");
  const { rows } = await db.pool.query("select last_error from chat_public.chats where id = $1", [chat]);
  assert.equal(rows[0].last_error, { kind: "provider_error", message: "provider error: bad_request (HTTP 400)" });
  const all = await messages(db, chat);
  assert.is(all[1]!.finish?.reason, "error");
  assert.is(all[1]!.visibility, "user", "an error before any output is recorded, not sent to the model");
});

test("interrupt during streaming (mock openai-chat held at a barrier): request aborted, partial text committed", async () => {
  const release = barrier();
  server.enqueue({
    text: ["partial ", "answer ", "never sent"],
    toolCalls: [{ id: "i1", name: "read_file", fragments: ['{"path":"a.txt"}'] }],
    hold: { afterEvents: 3, release: release.promise },
  });
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  let streamed = "";
  const seen = barrier();
  listener.on("notification", (n) => {
    streamed += (JSON.parse(n.payload ?? "{}") as { delta: string }).delta;
    if (streamed === "partial answer ") seen.resolve();
  });
  try {
    const chat = await createWorkerChat(db, user, "tell me", { model: "chat" });
    await listener.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chat}:parts`)}`);
    await seen.promise;
    const requestSignal = signals.at(-1)!;
    const started = Date.now();
    await interrupt(db, user, chat);
    await waitForStatus(db, chat, "waiting");
    const elapsed = Date.now() - started;
    assert.ok(requestSignal.aborted, "the provider request was aborted");
    const all = await messages(db, chat);
    assert.equal(shape(all), ["user:text", "assistant:text"]);
    assert.is(all[1]!.content[0]!.text, "partial answer ");
    assert.is(all[1]!.finish?.reason, "interrupted");
    assert.equal((await turn(db, chat))[0], { steps: 0, recoveries: 0, finished: true });
    assert.ok(elapsed < 5000, `interrupt took ${elapsed} ms`);
  } finally {
    release.resolve();
    await listener.end();
  }
});

test("interrupt during a dynamic-tool wait: pending calls get cancellations and the turn continues (scripted)", async () => {
  const chat = await createWorkerChat(db, user, JSON.stringify({ script: [
    { tool_calls: [{ name: "lookup", args: {} }] },
    { text: "continued without the lookup" },
  ] }), { dynamicTools: [{ name: "lookup", description: "client tool", input_schema: { type: "object" } }] });
  await waitForStatus(db, chat, "requires_action");
  await interrupt(db, user, chat);
  await waitFor("the turn to finish", async () => (await turn(db, chat))[0]?.finished);
  await waitForStatus(db, chat, "waiting");
  const all = await messages(db, chat);
  assert.equal(shape(all), ["user:text", "assistant:tool-call", "tool:tool-result", "assistant:text"]);
  assert.equal({ error: all[2]!.content[0]!.is_error, result: all[2]!.content[0]!.result },
    { error: true, result: { error: "canceled: the user interrupted" } });
  assert.is(all[3]!.content[0]!.text, "continued without the lookup");
  assert.equal((await turn(db, chat))[0], { steps: 2, recoveries: 0, finished: true });
});

test.run();
