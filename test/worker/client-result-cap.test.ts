// A client's tool result reaches the model cut to the deployment's tool result cap (CHATD_TOOL_RESULT_CAP_BYTES),
// with the note the worker's own tools get, while the transcript keeps what the client sent. Before, only the SQL
// bound on a submission (1 MiB) applied: a client could put a megabyte into every later prompt of the chat.
// Against the mock provider server (real HTTP on 127.0.0.1; not a live API).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, submitToolResults } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import { addModelConfig, createWorkerChat, fastSettings, makeWorkspaces, messages, startTestWorker, waitForStatus } from "../support/worker.ts";
import { READ_ONLY_DEPLOYMENT } from "../../src/tools/index.ts";
import type { RunningWorker } from "../../worker/index.ts";

const CAP = 1024;

let db: TestDatabase;
let worker: RunningWorker;
let server: MockProviderServer;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  server = await startMockProvider();
  await addModelConfig(db, "openai-chat", "openai-chat", server.url);
  worker = await startTestWorker(db, await makeWorkspaces(), { tools: { ...READ_ONLY_DEPLOYMENT, resultCapBytes: CAP } });
  user = await createUser(db, "carol");
});
test.after(async () => {
  await worker.stop();
  await server.close();
  await db.drop();
});

const lookup = { name: "lookup", description: "client-side lookup", input_schema: { type: "object" } };

/** Runs one dynamic-tool round trip with `result` as the client's answer; returns the provider's next request body
 * and the stored result. */
async function roundTrip(result: string): Promise<{ sent: string; stored: unknown }> {
  const from = server.requests.length;
  server.enqueue({ toolCalls: [{ id: "call_1", name: "lookup", fragments: ["{}"] }] }, { text: ["done"] });
  const chat = await createWorkerChat(db, user, "look it up", { model: "openai-chat", dynamicTools: [lookup] });
  await waitForStatus(db, chat, "requires_action");
  await submitToolResults(db, user, chat, [{ tool_call_id: "call_1", result }]);
  await waitForStatus(db, chat, "waiting");
  const sent = server.requests.slice(from).map((r) => r.rawBody);
  assert.is(sent.length, 2);
  const stored = (await messages(db, chat)).find((row) => row.role === "tool")!.content[0]!.result;
  return { sent: sent[1]!, stored };
}

test("a client's result over the cap reaches the model cut at the cap, with the truncation note", async () => {
  const result = `${"a".repeat(CAP)}${"b".repeat(4000)}`;
  const { sent, stored } = await roundTrip(result);
  assert.ok(sent.includes("a".repeat(CAP)), "the first cap bytes reached the provider");
  assert.not.ok(sent.includes("b".repeat(8)), "nothing after the cap reached the provider");
  assert.ok(sent.includes(`[truncated: the tool output had ${result.length} bytes; showing the first ${CAP}]`));
  assert.is(stored, result, "the transcript keeps what the client sent");
});

test("a client's result of exactly the cap reaches the model whole", async () => {
  const result = "c".repeat(CAP);
  const { sent, stored } = await roundTrip(result);
  assert.ok(sent.includes(result));
  assert.not.ok(sent.includes("[truncated"));
  assert.is(stored, result);
});

test.run();
