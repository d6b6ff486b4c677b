// Poison never loops: what PostgreSQL cannot store (U+0000, unpaired surrogates) in model text, reasoning and tool
// arguments is replaced by U+FFFD before the commit (worker/loop/poison.ts), so the turn completes with one model
// call per step and spends no recovery; a structured request gets its receipt. Real worker process, scripted model.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asUser, createUser, receipts, setStructuredExperiment, structured, text } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import type pg from "pg";
import { runChat } from "../../worker/chat-run.ts";
import { fastSettings, makeDeps, makeWorkspaces, messages, spawnWorkerProcess, turn, waitForStatus } from "../support/worker.ts";

let db: TestDatabase;
let root: string;
let user: string;
let worker: ReturnType<typeof spawnWorkerProcess>;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db, { lease_seconds: 2, max_recoveries_per_turn: 2 });
  await setStructuredExperiment(db, true);
  root = await makeWorkspaces();
  user = await createUser(db, "pia");
  worker = spawnWorkerProcess(db, root);
});
test.after(async () => {
  worker.kill("SIGTERM");
  await worker.exited;
  await db.drop();
});

async function chat(script: object[], format: string | null = null): Promise<string> {
  return asUser(db, user, async (client) => (await client.query<{ chat_id: string }>(
    "select chat_id from chat_public.create_chat(content => $1, workspace => 'ws', response_format => $2)",
    [text(JSON.stringify({ script })), format])).rows[0]!.chat_id);
}

test("U+0000 and lone surrogates in model text, reasoning and tool arguments are stored as U+FFFD; no recovery is spent", async () => {
  const id = await chat([
    { reasoning: "think\u0000ing", tool_calls: [{ name: "list_files", args: { path: ".\u0000" } }] },
    { text: "nul \u0000 high \ud800 low \udc00 pair \ud83d\ude00" },
  ]);
  await waitForStatus(db, id, "waiting");
  const rows = await messages(db, id);
  const parts = rows.flatMap((row) => row.content);
  assert.is(parts.find((p) => p.type === "reasoning")?.text, "think\ufffding");
  assert.equal(parts.find((p) => p.type === "tool-call")?.args, { path: ".\ufffd" });
  assert.is(parts.filter((p) => p.type === "text").at(-1)?.text, "nul \ufffd high \ufffd low \ufffd pair \ud83d\ude00");
  assert.equal(rows.filter((row) => row.role === "assistant").map((row) => row.finish?.attempts), [1, 1], "one model call per step");
  assert.equal(await turn(db, id), [{ steps: 2, recoveries: 0, finished: true }]);
});

test("U+0000 in a structured turn: the request gets exactly one receipt, no recovery is spent", async () => {
  const id = await chat([
    { text: "draft \u0000", tool_calls: [{ name: "coder_structured_output", args: { output: { note: "a\u0000b" } } }] },
    { tool_calls: [{ name: "coder_structured_output", args: { output: { note: "clean" } } }] },
  ], structured("report", { type: "object", properties: { note: { type: "string" } }, required: ["note"] }));
  await waitForStatus(db, id, "waiting");
  const [receipt, ...more] = await receipts(db, id);
  assert.is(more.length, 0, "exactly one receipt");
  assert.is(receipt?.status, "succeeded");
  const { rows } = await db.pool.query("select structured_output -> 'value' as value from chat_public.chat_messages where id = $1",
    [receipt?.id]);
  assert.equal(rows[0]?.value, { note: "clean" }, "the validated value, never one with a replaced character");
  assert.is((await turn(db, id))[0]?.recoveries, 0);
});

test("a commit PostgreSQL refuses with a data exception fails the turn at once (unstorable_output), spending no recovery", async () => {
  // The worker process must not take this chat (stopped before the chat exists): it runs in this process, with a
  // pool whose commits are refused.
  worker.kill("SIGSTOP");
  const id = await chat([{ text: "refused" }]);
  const deps = makeDeps(db, root, "refusing");
  const refused = Object.assign(Object.create(db.pool) as pg.Pool, {
    query: (config: unknown, values?: unknown) => {
      const name = (config as { name?: unknown } | null)?.name;
      if (typeof name === "string" && name.startsWith("chatd_commit_step")) {
        return Promise.reject(Object.assign(new Error("unsupported Unicode escape sequence"), { code: "22P05" }));
      }
      return db.pool.query(config as string, values as unknown[]);
    },
  });
  try {
    assert.equal(await runChat({ ...deps, pool: refused }, id), ["failed"]);
    const { rows } = await db.pool.query("select status::text, last_error ->> 'kind' as kind from chat_public.chats where id = $1", [id]);
    assert.equal(rows[0], { status: "error", kind: "unstorable_output" });
    assert.is((await turn(db, id))[0]?.recoveries, 0);
  } finally {
    await deps.close();
    worker.kill("SIGCONT");
  }
});

test.run();
