// Deleting a chat while a real worker streams its turn (mock provider held at a barrier, not a live API): the run
// is stopped, its next commit is fenced out without an error or a recovery, and nothing of the chat is left.
import { Writable } from "node:stream";
import { pino } from "pino";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, startTestWorker, waitFor } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { leftovers } from "./support.ts";

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let user: string;
const lines: { level: number; msg: string }[] = [];
const signals: AbortSignal[] = [];

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  server = await startMockProvider();
  await addModelConfig(db, "chat", "openai-chat", server.url);
  const logger = pino({ level: "info" }, new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  }));
  worker = await startTestWorker(db, await makeWorkspaces(), {
    logger,
    modelRuntime: { fetch: (input, init) => {
      if (init?.signal != null) signals.push(init.signal);
      return fetch(input, init);
    } },
  });
  user = await createUser(db, "dora");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

test("deleting a chat mid-stream stops the run, fences its commit out quietly, and leaves no row", async () => {
  const reached = barrier();
  const release = barrier();
  server.enqueue({ text: ["partial ", "never committed"], hold: { afterEvents: 1, release: release.promise, reached: reached.resolve } });
  const chat = await createWorkerChat(db, user, "tell me", { model: "chat", workspace: null, responseFormat: structured() });
  try {
    await reached.promise;
    const signal = signals.at(-1)!;
    const { rows } = await db.pool.query<{ id: string }>("select id from chat_public.chat_messages where chat_id = $1", [chat]);
    const sweepsBefore = lines.filter((l) => l.msg === "lease sweep re-enqueued chats").length;
    await db.as("chat_user", user, (c) => c.query("select chat_public.delete_chat($1)", [chat]), true);
    await waitFor("the run to stop", async () => lines.some((l) => l.msg === "chat deleted; this runner stops without writing"));
    assert.ok(signal.aborted, "the provider request was aborted at once (the delete notified the run)");
    // The job ends with the run (Graphile Worker deletes a completed job): then nothing names the chat.
    await waitFor("the job to end", async () => Object.keys(await leftovers(db, [chat], rows.map((r) => r.id))).length === 0);
    await worker.sweep();
    assert.equal(await leftovers(db, [chat]), {});
    const serious = lines.filter((l) => l.level >= 40);
    assert.equal(serious, [], "no warning or error was logged");
    assert.is(lines.filter((l) => l.msg === "lease sweep re-enqueued chats").length, sweepsBefore, "no recovery");
    assert.is(lines.filter((l) => l.msg === "chat deleted; this runner stops without writing").length, 1);
  } finally {
    release.resolve();
  }
});

test.run();
