// Provider-executed tools: a web search that Anthropic runs on its side arrives in
// the stream as a `server_tool_use` block plus its `web_search_tool_result`. chatd passes the tool through from the
// model config, records the call and its result as `provider_executed` parts of the assistant row, never runs
// them locally, and replays them unchanged in the next request — also after the worker that streamed them died
// right after the commit and a second worker process recovered the turn. Mock provider server over real HTTP +
// SSE with a hand-made recorded stream (test/fixtures/provider-streams); no live API.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startMockProvider, type MockProviderServer } from "../support/mock-providers/index.ts";
import {
  addModelConfig, createWorkerChat, makeWorkspaces, messages, setSetting, shape, spawnWorkerProcess, turn, waitFor, waitForStatus,
} from "../support/worker.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "provider-streams", "anthropic-web-search-then-tool.chunks.txt");
const SEARCH_ID = "srvtoolu_fixture_ws_1";

let db: TestDatabase;
let server: MockProviderServer;
let root: string;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await setSetting(db, "lease_seconds", 2);
  await setSetting(db, "retry_initial_delay_ms", 10);
  server = await startMockProvider();
  await addModelConfig(db, "anthropic-search", "anthropic", server.url, "claude-sonnet-4-5-20250929");
  await db.pool.query("update chat_private.model_configs set options = $2 where id = $1", ["anthropic-search",
    JSON.stringify({ providerTools: [{ id: "anthropic.web_search_20250305", name: "web_search", args: { maxUses: 2 } }] })]);
  root = await makeWorkspaces();
  user = await createUser(db, "pia");
});
test.after(async () => {
  await server.close();
  await db.drop();
});

async function stopProcess(child: ReturnType<typeof spawnWorkerProcess>): Promise<void> {
  child.kill("SIGTERM");
  await child.exited;
}

test("a provider-executed web search is stored once, never executed locally, and replayed after a worker restart", async () => {
  server.enqueue({ kind: "fixture", path: FIXTURE }, { text: ["The page and a.txt agree: ", "42."] });
  const from = server.requests.length;
  const chat = await createWorkerChat(db, user, "search the web, then read a.txt", { model: "anthropic-search" });
  // The first worker commits the assistant step (search call, search result, text, read_file call) and dies.
  const doomed = spawnWorkerProcess(db, root, { CHATD_FAULTS: "after_assistant_commit:exit" });
  assert.is(await doomed.exited, 137, "the first worker died right after the assistant commit");
  const afterCrash = await messages(db, chat);
  assert.equal(shape(afterCrash), ["user:text", "assistant:text,tool-call,tool-result,text,tool-call"]);

  const survivor = spawnWorkerProcess(db, root);
  try {
    await waitFor("the recovered turn to finish", async () => (await turn(db, chat))[0]?.finished);
    await waitForStatus(db, chat, "waiting");
  } finally {
    await stopProcess(survivor);
  }
  const rows = await messages(db, chat);
  assert.equal(shape(rows), ["user:text", "assistant:text,tool-call,tool-result,text,tool-call", "tool:tool-result",
    "assistant:text"]);
  const step = rows[1]!.content;
  assert.equal(step[1], { type: "tool-call", tool_call_id: SEARCH_ID, tool_name: "web_search",
    args: { query: "chatd durable agent chat" }, provider_executed: true });
  assert.is(step[2]!.tool_call_id, SEARCH_ID);
  assert.is(step[2]!.provider_executed, true);
  assert.is(step[2]!.is_error, false);
  assert.is((step[2]!.result as { url: string }[])[0]!.url, "https://example.com/chatd");
  assert.equal(step[4], { type: "tool-call", tool_call_id: "toolu_fixture_ws_read", tool_name: "read_file",
    args: { path: "a.txt" }, provider_executed: false });
  // Only the local call was answered locally, once; the search has exactly one call and one result, both upstream.
  const results = rows.flatMap((r) => r.content.filter((p) => p.type === "tool-result"));
  assert.equal(results.map((p) => `${String(p.tool_call_id)}:${String(p.provider_executed)}`),
    [`${SEARCH_ID}:true`, "toolu_fixture_ws_read:false"]);
  assert.is(rows[2]!.content[0]!.result, "alpha file\nthe answer is 42\n");
  assert.is(rows.at(-1)!.content[0]!.text, "The page and a.txt agree: 42.");
  assert.equal(await turn(db, chat), [{ steps: 2, recoveries: 1, finished: true }]);

  // Two provider requests in all: the crash did not repeat the first one, and nothing ran the search again.
  const sent = server.requests.slice(from);
  assert.is(sent.length, 2);
  const offered = sent[0]!.body.tools as { type?: string; name: string }[];
  assert.ok(offered.some((t) => t.name === "web_search" && t.type === "web_search_20250305"), "the provider tool is passed through");
  assert.ok(offered.some((t) => t.name === "read_file"), "workspace tools are offered beside it");
  // The second request replays the search call and its (encrypted) result inside the assistant turn, and answers
  // only the local call with a tool_result.
  const assistant = (sent[1]!.body.messages as { role: string; content: { type: string; id?: string; tool_use_id?: string;
    content?: unknown }[] }[]).filter((m) => m.role === "assistant");
  const blocks = assistant.flatMap((m) => m.content);
  assert.equal(blocks.filter((b) => b.type === "server_tool_use").map((b) => b.id), [SEARCH_ID]);
  const replayed = blocks.find((b) => b.type === "web_search_tool_result");
  assert.is(replayed?.tool_use_id, SEARCH_ID);
  assert.ok(JSON.stringify(replayed?.content).includes("EqgfCioIARgBIiQ-fixture-encrypted-page=="), "the encrypted result is replayed verbatim");
  const toolResults = (sent[1]!.body.messages as { role: string; content: { type: string; tool_use_id?: string }[] }[])
    .flatMap((m) => (m.role === "user" ? m.content : [])).filter((b) => b.type === "tool_result");
  assert.equal(toolResults.map((b) => b.tool_use_id), ["toolu_fixture_ws_read"]);
});

test.run();
