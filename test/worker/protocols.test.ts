// The agent loop over each provider wire protocol, against the mock provider servers (real HTTP + SSE on
// 127.0.0.1; mock providers, not live APIs): a workspace tool step, a dynamic tool pause, the client's result,
// the final answer. Also checks what reached the provider (tools, tool results, key in the header only) and the
// part deltas published on `chatd:chat:<id>:parts`.
import pg from "pg";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, submitToolResults } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startMockProvider, type MockProviderServer, type MockResponse } from "../support/mock-providers/index.ts";
import {
  addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, messages, MOCK_KEY, shape, startTestWorker, turn,
  waitForStatus,
} from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  server = await startMockProvider();
  for (const provider of ["openai-chat", "openai-responses", "anthropic"]) await addModelConfig(db, provider, provider, server.url);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "bob");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

const lookup = { name: "lookup", description: "client-side lookup", input_schema: { type: "object", properties: { q: { type: "string" } } } };

function plan(prefix: string): MockResponse[] {
  return [
    { toolCalls: [{ id: `${prefix}_c1`, name: "read_file", fragments: ['{"path":', '"a.txt"}'] }] },
    { text: ["Let me ", "ask."], toolCalls: [{ id: `${prefix}_c2`, name: "lookup", fragments: ['{"q":"x"}'] }] },
    { text: ["The answer ", "is 42."] },
  ];
}

/** Serialized request bodies of this chat's steps (they differ per protocol; we only search their text). */
const bodies = (from: number) => server.requests.slice(from).map((r) => r.rawBody);

for (const provider of ["openai-chat", "openai-responses", "anthropic"]) {
  test(`${provider} (mock provider): workspace tool, dynamic tool pause and resume, final answer`, async () => {
    const from = server.requests.length;
    server.enqueue(...plan(provider.replace(/-/g, "_")));
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const deltas: { seq: number; kind: string; delta: string; history_version: string; generation_attempt: string }[] = [];
    listener.on("notification", (n) => deltas.push(JSON.parse(n.payload ?? "{}")));
    try {
      const chat = await createWorkerChat(db, user, "what is the answer?", { model: provider, dynamicTools: [lookup] });
      await listener.query(`listen ${pg.escapeIdentifier(`chatd:chat:${chat}:parts`)}`);
      await waitForStatus(db, chat, "requires_action");
      const { rows } = await db.pool.query("select pending_tool_calls from chat_public.chats where id = $1", [chat]);
      const pending = rows[0].pending_tool_calls as { tool_call_id: string; args: unknown }[];
      assert.equal(pending.map((p) => p.args), [{ q: "x" }]);
      await submitToolResults(db, user, chat, [{ tool_call_id: pending[0]!.tool_call_id, result: "x means 42" }]);
      await waitForStatus(db, chat, "waiting");

      const rows2 = await messages(db, chat);
      assert.equal(shape(rows2), ["user:text", "assistant:tool-call", "tool:tool-result", "assistant:text,tool-call",
        "tool:tool-result", "assistant:text"]);
      assert.is(rows2[2]!.content[0]!.result, "alpha file\nthe answer is 42\n");
      assert.is(rows2.at(-1)!.content[0]!.text, "The answer is 42.");
      assert.equal((await turn(db, chat))[0], { steps: 3, recoveries: 0, finished: true });
      // Three provider requests; each later one replays the earlier tool results.
      const sent = bodies(from);
      assert.is(sent.length, 3);
      assert.ok(sent[1]!.includes("the answer is 42"), "the read_file result reached the provider");
      assert.ok(sent[2]!.includes("x means 42"), "the client's result reached the provider");
      for (const r of server.requests.slice(from)) {
        assert.not.ok(r.rawBody.includes(MOCK_KEY), "the key never travels in a body");
        assert.ok(JSON.stringify(r.headers).includes(MOCK_KEY), "the key travels in a header");
      }
      // The assistant row carries no private data; provenance sits in message_internals.
      assert.not.ok(JSON.stringify(rows2[1]!.content).includes("replay"));
      assert.is(rows2[1]!.finish?.provider, provider);
      // Part deltas: per episode contiguous from 1, and the final answer's text streamed as it was committed.
      const episode = (d: (typeof deltas)[number]) => `${d.history_version}/${d.generation_attempt}`;
      const last = deltas.filter((d) => episode(d) === episode(deltas.at(-1)!));
      assert.equal(last.map((d) => d.seq), last.map((_, i) => i + 1));
      assert.is(last.filter((d) => d.kind === "text").map((d) => d.delta).join(""), "The answer is 42.");
    } finally {
      await listener.end();
    }
  });
}

test.run();
