// The useChat endpoint with the AI SDK's own client: `Chat` (@ai-sdk/react, usable without React) on
// `DefaultChatTransport` against a live API and worker. Scripted provider for the workspace-tool, client-tool and
// failure turns; the mock provider (held with barriers) where a turn must be caught in the middle (resume, stop).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Chat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from "ai";
import { barrier } from "../support/mock-providers/index.ts";
import { waitFor } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

let stack: LiveStack;
let token: string;
let url: string;

test.before(async () => {
  stack = await startLiveStack(["alice", "bob"]);
  token = stack.users.alice!.token;
  url = stack.t.api.url;
});
test.after(() => stack.close());

const BIG = "1234567890123456789012345";
const envelope = (schema: object, name = "report") => JSON.stringify({ type: "json_schema", json_schema: { name, schema } });
const N_SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
const script = (steps: object[]) => JSON.stringify({ script: steps });

interface Receipt { requestId: string; status: string; valueJson: string | null; error: { code: string } | null; schemaName: string | null }

function makeChat(id: string, options: { body?: object; onToolCall?: (chat: Chat<UIMessage>, call: { toolCallId: string; toolName: string; input: unknown }) => void } = {}) {
  const data: { type: string; data: unknown }[] = [];
  const chat: Chat<UIMessage> = new Chat<UIMessage>({
    id,
    transport: new DefaultChatTransport({ api: `${url}/api/chat`, headers: { Authorization: `Bearer ${token}` }, body: options.body }),
    onData: (part) => void data.push(part as { type: string; data: unknown }),
    onToolCall: ({ toolCall }) => options.onToolCall?.(chat, toolCall as { toolCallId: string; toolName: string; input: unknown }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  });
  return { chat, data };
}

const assistant = (chat: Chat<UIMessage>) => chat.messages.filter((m) => m.role === "assistant").at(-1);
const partsOf = (message: UIMessage | undefined, type: string) => (message?.parts ?? []).filter((p) => p.type === type);
const receiptsOf = (message: UIMessage | undefined) => partsOf(message, "data-receipt").map((p) => (p as { data: Receipt }).data);
const textOf = (message: UIMessage | undefined) => partsOf(message, "text").map((p) => (p as { text: string }).text).join("|");

async function settled(chat: Chat<UIMessage>, what: string, check: () => boolean): Promise<void> {
  await waitFor(what, async () => chat.status === "ready" && check(), 30_000).catch((error: unknown) => {
    console.log(what, chat.status, chat.error, JSON.stringify(chat.messages));
    throw error;
  });
}

async function history(chatId: string): Promise<{ status: string; active: boolean; messages: UIMessage[] }> {
  const response = await fetch(`${url}/api/chat/${chatId}/messages`, { headers: { Authorization: `Bearer ${token}` } });
  assert.is(response.status, 200);
  return response.json() as Promise<{ status: string; active: boolean; messages: UIMessage[] }>;
}

const chatIdOf = (message: UIMessage | undefined) => (message?.metadata as { chatId: string }).chatId;

test("(scripted provider) a structured turn: SSE with the v1 header, a workspace tool call with its output, the receipt as data-receipt with every digit", async () => {
  const raw = await fetch(`${url}/api/chat`, {
    method: "POST", headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ id: "raw-1", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] }] }),
  });
  assert.is(raw.status, 200);
  assert.is(raw.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  assert.match(raw.headers.get("content-type") ?? "", /text\/event-stream/);
  assert.match(await raw.text(), /data: \{"type":"start"/);

  const { chat } = makeChat("structured-1", { body: { workspace: "ws", responseFormat: envelope(N_SCHEMA) } });
  await chat.sendMessage({ text: script([
    { reasoning: "List first.", text: "Listing the workspace.", tool_calls: [{ name: "list_files", args: { path: "." } }] },
    { tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":{"n":${BIG}}}` }] },
    ]) });
  await settled(chat, "the structured turn", () => receiptsOf(assistant(chat)).length === 1);
  const message = assistant(chat)!;
  const [receipt] = receiptsOf(message);
  assert.is(receipt!.status, "succeeded");
  assert.is(receipt!.valueJson, `{"n": ${BIG}}`);
  assert.is(receipt!.schemaName, "report");
  const tools = partsOf(message, "dynamic-tool") as { toolName: string; state: string; output: unknown }[];
  assert.equal(tools.map((t) => t.toolName), ["list_files"], "the finalizer's call is not shown; the receipt is the result");
  assert.is(tools[0]!.state, "output-available");
  assert.ok(JSON.stringify(tools[0]!.output).includes("a.txt"));
  assert.is(textOf(message), "Listing the workspace.", "the turn ends with the receipt");
  assert.is(partsOf(message, "reasoning").length, 1);
  assert.not.ok(JSON.stringify(partsOf(message, "text")).includes(BIG), "the value never arrives as text");

  // The loaded transcript is the same message as the streamed one.
  const loaded = await history(chatIdOf(message));
  assert.is(loaded.active, false);
  assert.equal(loaded.messages.at(-1), JSON.parse(JSON.stringify(message)));
});

test("(scripted provider) a client tool call: onToolCall → addToolOutput → submitToolResults, and the turn goes on without a repeated part", async () => {
  const { chat, data } = makeChat("client-tool-1", {
    body: { dynamicTools: [{ name: "ask_user", description: "ask the user", input_schema: { type: "object" } }] },
    onToolCall: (self, call) => {
      if (call.toolName === "ask_user") void self.addToolOutput({ tool: "ask_user", toolCallId: call.toolCallId, output: { answer: "yes" } } as never);
    },
  });
  await chat.sendMessage({ text: script([
    { text: "Asking.", tool_calls: [{ name: "ask_user", args: { question: "go?" } }] },
    { text: "You said yes." },
  ]) });
  await settled(chat, "the client-tool turn", () => textOf(assistant(chat)).includes("You said yes."));
  const message = assistant(chat)!;
  assert.is(textOf(message), "Asking.|You said yes.");
  const waiting = data.find((part) => part.type === "data-chat" && (part.data as { status: string }).status === "requires_action");
  assert.equal((waiting?.data as { pendingToolCalls: { tool_name: string }[] }).pendingToolCalls.map((c) => c.tool_name), ["ask_user"],
    "the stream said what the chat waits on");
  const [call] = partsOf(message, "dynamic-tool") as { toolName: string; state: string; output: unknown }[];
  assert.is(call!.state, "output-available");
  assert.equal(call!.output, { answer: "yes" });
  const loaded = await history(chatIdOf(message));
  assert.equal(loaded.messages.at(-1), JSON.parse(JSON.stringify(message)));
});

test("(scripted provider) client tools of a new chat in the AI SDK's spelling {name, description, inputSchema} become the chat's dynamic tools; bad ones are refused at their field", async () => {
  const inputSchema = { type: "object", properties: { options: { type: "array", items: { type: "string" } } } };
  const { chat, data } = makeChat("client-tool-sdk-spelling", { body: { dynamicTools: [{ name: "pick_colour", description: "pick one", inputSchema }] } });
  await chat.sendMessage({ text: script([{ text: "Choose.", tool_calls: [{ name: "pick_colour", args: { options: ["red", "green"] } }] }]) });
  await settled(chat, "the client-tool request", () => data.some((part) => part.type === "data-chat" && (part.data as { status: string }).status === "requires_action"));
  const chatId = chatIdOf(assistant(chat));
  const { rows } = await stack.t.db.pool.query<{ dynamic_tools: unknown }>("select dynamic_tools from chat_public.chats where id = $1", [chatId]);
  assert.equal(rows[0]!.dynamic_tools, [{ name: "pick_colour", description: "pick one", input_schema: inputSchema }]);
  const [call] = partsOf(assistant(chat), "dynamic-tool") as { toolName: string; state: string; input: unknown }[];
  assert.equal([call!.toolName, call!.state, call!.input], ["pick_colour", "input-available", { options: ["red", "green"] }]);

  const post = (id: string, dynamicTools: unknown) => fetch(`${url}/api/chat`, {
    method: "POST", headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ id, messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }], dynamicTools }),
  });
  const before = (await stack.t.db.pool.query("select count(*)::int as n from chat_public.chats")).rows[0].n as number;
  for (const [tools, field] of [
    [[{ name: "ok", inputSchema }, { name: "bad name", inputSchema }], "dynamic_tools[1].name"],
    [[{ name: "no_schema", description: "x" }], "dynamic_tools[0].input_schema"],
    [[{ name: "extra", inputSchema, handler: "x" }], "dynamic_tools[0]"],
  ] as const) {
    const refused = await post(`bad-tools-${field}`, tools);
    assert.is(refused.status, 400, field);
    const body = await refused.json() as { error: { code: string; validations: { field: string }[] } };
    assert.equal([body.error.code, body.error.validations.map((v) => v.field)], ["INVALID_INPUT", [field]]);
  }
  const notArray = await post("bad-tools-object", { name: "x" });
  assert.is(notArray.status, 400);
  assert.is((await notArray.json() as { error: { code: string } }).error.code, "INVALID_INPUT");
  const after = (await stack.t.db.pool.query("select count(*)::int as n from chat_public.chats")).rows[0].n as number;
  assert.is(after, before, "a refused declaration creates no chat");
});

test("(mock provider) a reload mid-turn: a fresh Chat resumes the running turn and ends with exactly the committed parts", async () => {
  const release = barrier();
  const reached = barrier();
  stack.barriers.push(release);
  stack.server.enqueue({ text: ["Looking "], toolCalls: [{ id: "call_ls", name: "list_files", fragments: ['{"path":"."}'] }] });
  stack.server.enqueue({ text: ["Half ", "way ", "there."], hold: { afterEvents: 2, release: release.promise, reached: () => reached.resolve() } });
  const first = makeChat("resume-1", { body: { workspace: "ws", modelConfigId: "mock" } });
  void first.chat.sendMessage({ text: "go" });
  await reached.promise;
  await waitFor("the first step in the first client", async () => partsOf(assistant(first.chat), "dynamic-tool").length === 1);
  const chatId = chatIdOf(assistant(first.chat));
  await first.chat.stop(); // the reload: the client goes away, the turn goes on

  const before = await history(chatId);
  assert.is(before.active, true);
  const second = makeChat(chatId);
  second.chat.messages = before.messages;
  const resumed = second.chat.resumeStream();
  // Streaming: the replay's first chunks arrived (the loaded messages alone leave the status "submitted").
  await waitFor("the replay", async () => second.chat.status === "streaming" && partsOf(assistant(second.chat), "dynamic-tool").length === 1);
  release.resolve();
  await resumed;
  await settled(second.chat, "the resumed turn", () => textOf(assistant(second.chat)).includes("there."));
  const message = assistant(second.chat)!;
  assert.is(second.chat.messages.filter((m) => m.id === message.id).length, 1, "the turn is one message, replaced on replay");
  assert.is(textOf(message), "Looking |Half way there.");
  assert.is(partsOf(message, "dynamic-tool").length, 1);
  const after = await history(chatId);
  assert.equal(after.messages, JSON.parse(JSON.stringify(second.chat.messages)));

  const idle = await fetch(`${url}/api/chat/${chatId}/stream`, { headers: { Authorization: `Bearer ${token}` } });
  assert.is(idle.status, 204, "no turn runs: nothing to resume");
});

test("(mock provider) a step streams live, stop interrupts the running structured turn and the stream ends with a canceled receipt", async () => {
  const release = barrier();
  const reached = barrier();
  stack.barriers.push(release);
  stack.server.enqueue({ text: ["Thinking ", "slowly"], hold: { afterEvents: 2, release: release.promise, reached: () => reached.resolve() } });
  const { chat } = makeChat("stop-1", { body: { modelConfigId: "mock", responseFormat: envelope(N_SCHEMA) } });
  const sent = chat.sendMessage({ text: "take your time" });
  await reached.promise;
  await waitFor("the chat id", async () => assistant(chat)?.metadata != null);
  // The held step's first delta is on screen before anything was committed: parts stream live.
  await waitFor("the live preview", async () => textOf(assistant(chat)).includes("Thinking"));
  const chatId = chatIdOf(assistant(chat));
  const stop = await fetch(`${url}/api/chat/${chatId}/stop`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
  assert.is(stop.status, 200);
  await sent;
  await settled(chat, "the canceled receipt", () => receiptsOf(assistant(chat)).length === 1);
  const [receipt] = receiptsOf(assistant(chat));
  assert.is(receipt!.status, "canceled");
  assert.ok(receipt!.error?.code, "a canceled receipt carries its code");
  assert.is(receipt!.valueJson, null);
});

test("(scripted provider) a structured request the model never finalizes ends with a failed receipt and its code", async () => {
  const { chat } = makeChat("failed-1", { body: { responseFormat: envelope(N_SCHEMA) } });
  await chat.sendMessage({ text: script([{ text: "I will not answer in JSON." }]) });
  await settled(chat, "the failed receipt", () => receiptsOf(assistant(chat)).length === 1);
  const [receipt] = receiptsOf(assistant(chat));
  assert.is(receipt!.status, "failed");
  assert.type(receipt!.error?.code, "string");
});

test("refusals keep the API's codes: an invalid schema is INVALID_RESPONSE_FORMAT with field errors; no token is 401; another user's chat is 404", async () => {
  const post = (body: object, auth: string | null = token) => fetch(`${url}/api/chat`, {
    method: "POST", headers: { ...(auth ? { Authorization: `Bearer ${auth}` } : {}), "content-type": "application/json" }, body: JSON.stringify(body),
  });
  const messages = [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }];
  const bad = await post({ id: "bad-schema", messages, responseFormat: envelope({ type: "object", $ref: "#/x" }) });
  assert.is(bad.status, 400);
  const body = await bad.json() as { error: { code: string; validations: { field: string }[] } };
  assert.is(body.error.code, "INVALID_RESPONSE_FORMAT");
  assert.ok(body.error.validations.length > 0);
  assert.is((await post({ id: "x", messages }, null)).status, 401);

  const { chat } = makeChat("owned-by-alice");
  await chat.sendMessage({ text: "hello" });
  await settled(chat, "alice's turn", () => textOf(assistant(chat)).length > 0);
  const chatId = chatIdOf(assistant(chat));
  const bob = stack.users.bob!.token;
  const foreign = await fetch(`${url}/api/chat/${chatId}/messages`, { headers: { Authorization: `Bearer ${bob}` } });
  assert.is(foreign.status, 404);
  const check = await fetch(`${url}/api/response-format/check`, {
    method: "POST", headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ responseFormat: envelope({ type: "object", $ref: "#/x" }) }),
  });
  const checked = await check.json() as { ok: boolean; errors: { field: string }[] };
  assert.is(checked.ok, false);
  assert.is(checked.errors[0]!.field.startsWith("response_format.json_schema.schema"), true);
});

test.run();
