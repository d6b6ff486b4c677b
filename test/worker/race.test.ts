// Two runners racing for one chat (mock openai-chat provider): while one holds the lease the other's acquire is
// refused (CHLSD) and writes nothing; once the lease passes on, the first runner is fenced: it sees the history
// move under its stream (notification) or its commit is refused (CHFNC); either way only the new runner's answer
// is committed. The task body is called directly, so the interleaving is set by
// barriers, not by job scheduling.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runChat } from "../../worker/chat-run.ts";
import { createUser, expireLease } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { barrier, startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { addModelConfig, createWorkerChat, makeDeps, makeWorkspaces, messages, setSetting, shape, statusOf, turn } from "../support/worker.ts";

let db: TestDatabase;
let server: MockProviderServer;

test.before(async () => {
  db = await createTestDatabase();
  // A long lease: the held runner's heartbeat must not fire during the test, so the fence is what stops it.
  await setSetting(db, "lease_seconds", 60);
  server = await startMockProvider();
  await addModelConfig(db, "chat", "openai-chat", server.url);
});
test.after(async () => {
  await server.close();
  await db.drop();
});

test("two runners: the second is refused while the first holds the lease; a stale runner's commit is fenced", async () => {
  const root = await makeWorkspaces();
  const a = makeDeps(db, root, "worker-a");
  const b = makeDeps(db, root, "worker-b");
  try {
    const user = await createUser(db, "dave");
    const chat = await createWorkerChat(db, user, "race", { model: "chat", workspace: null });
    const reached = barrier();
    const release = barrier();
    server.enqueue(
      { text: ["from ", "A"], hold: { afterEvents: 2, release: release.promise, reached: reached.resolve } },
      { text: ["from ", "B"] },
    );
    const runA = runChat(a, chat);
    await reached.promise;
    const before = await messages(db, chat);
    assert.equal(await runChat(b, chat), [], "B's acquire is refused (CHLSD) and B ends quietly");
    assert.equal(await messages(db, chat), before, "B wrote nothing");

    // The lease passes to B (as after A's expiry); B runs the turn to its end.
    await expireLease(db, chat);
    assert.equal(await runChat(b, chat), ["finished"]);
    release.resolve();
    assert.equal(await runA, ["lost"], "A was fenced and wrote nothing");
    const rows = await messages(db, chat);
    assert.equal(shape(rows), ["user:text", "assistant:text"]);
    assert.is(rows[1]!.content[0]!.text, "from B");
    assert.is(await statusOf(db, chat), "waiting");
    assert.equal((await turn(db, chat)).map((t) => t.steps), [1]);
  } finally {
    await a.close();
    await b.close();
  }
});

test.run();
