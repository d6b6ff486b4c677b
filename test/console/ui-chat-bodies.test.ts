// Malformed useChat bodies (issue: 500s and 422 INTERNAL): every shape, encoding and nesting problem is a typed
// 4xx naming its field, and a refused request changes nothing (no chat, no submitted tool result). Fuzzed with
// fast-check: no body makes the endpoint answer 5xx or INTERNAL.
import fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { waitFor } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

let stack: LiveStack;
let token: string;
let url: string;

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  token = stack.users.alice!.token;
  url = stack.t.api.url;
});
test.after(() => stack.close());

const post = (body: string, path = "/api/chat") => fetch(`${url}${path}`, {
  method: "POST", headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" }, body,
});
const user = (text: string, id = "u1") => ({ id, role: "user", parts: [{ type: "text", text }] });
const chats = async () => (await stack.t.db.pool.query<{ n: number }>("select count(*)::int as n from chat_public.chats")).rows[0]!.n;
const deep = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

interface Refusal { error: { code: string; message: string; validations: { field: string; detail: string }[] } }

async function refused(body: string, status: number, field: string | RegExp, path?: string): Promise<void> {
  const response = await post(body, path);
  const text = await response.text();
  assert.is(response.status, status, `${String(field)}: ${text.slice(0, 300)}`);
  const parsed = JSON.parse(text) as Refusal;
  assert.is.not(parsed.error.code, "INTERNAL");
  const named = parsed.error.validations[0]?.field ?? "";
  assert.ok(typeof field === "string" ? named === field : field.test(named), `${String(field)}: ${text.slice(0, 300)}`);
}

test("shapes: messages without parts, parts as a string or [null], an assistant message without parts, a numeric id: 400 naming the field, no chat created", async () => {
  const before = await chats();
  const cases: [unknown, string][] = [
    [{ id: "s1", messages: [{ id: "u1", role: "user" }] }, "messages[0].parts"],
    [{ id: "s2", messages: [{ id: "u1", role: "user", parts: "hello" }] }, "messages[0].parts"],
    [{ id: "s3", messages: [{ id: "u1", role: "user", parts: [null] }] }, "messages[0].parts[0]"],
    [{ id: "s4", messages: [user("hi"), { id: "a1", role: "assistant" }] }, "messages[1].parts"],
    [{ id: "s5", messages: [{ id: 7, role: "user", parts: [{ type: "text", text: "hi" }] }] }, "messages[0].id"],
    [{ id: "s6", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: 5 }] }] }, "messages[0].parts[0].text"],
    [{ id: "s7", messages: [] }, "messages"],
    [{ id: 1, messages: [user("hi")] }, "id"],
    [[], "body"],
    [{ id: "s8", messages: [user("hi")], trigger: "again" }, "trigger"],
    [{ id: "s9", messages: [user("hi")], workspace: 3 }, "workspace"],
  ];
  for (const [body, field] of cases) await refused(JSON.stringify(body), 400, field);
  assert.is(await chats(), before, "a refused request creates no chat");
});

test("encoding and nesting: a lone surrogate, 5,000 levels in dynamicTools[].inputSchema, in an object responseFormat and in a tool output: 400 naming the field", async () => {
  const before = await chats();
  await refused('{"id":"e1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"\\ud800"}]}]}', 400, "messages[0].parts[0].text");
  await refused(`{"id":"e2","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}],"dynamicTools":[{"name":"t","inputSchema":${deep(5000)}}]}`,
    400, /^dynamicTools\[0\]\.inputSchema(\.a){100,}$/);
  await refused(`{"id":"e3","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}],"responseFormat":${deep(5000)}}`,
    400, /^responseFormat(\.a){100,}$/);
  await refused(`{"id":"e4","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]},{"id":"a1","role":"assistant","parts":[{"type":"dynamic-tool","toolCallId":"c","state":"output-available","output":${deep(5000)}}]}]}`,
    400, /^messages\[1\]\.parts\[0\]\.output(\.a){100,}$/);
  await refused('{"responseFormat":"\\udfff"}', 400, "responseFormat", "/api/response-format/check");
  const bytes = await fetch(`${url}/api/chat`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body: Buffer.from([0x7b, 0xff, 0x7d]) });
  assert.is(bytes.status, 400);
  assert.is(await chats(), before);
});

test("an assistant answer with a numeric id is refused before its tool results are submitted: the call stays pending", async () => {
  const created = await post(JSON.stringify({ id: "answer-numeric-id",
    messages: [user(JSON.stringify({ script: [{ text: "Asking.", tool_calls: [{ name: "ask_user", args: {} }] }] }))],
    dynamicTools: [{ name: "ask_user", description: "ask", inputSchema: { type: "object" } }] }));
  assert.is(created.status, 200);
  await created.text();
  let chat: { id: string; status: string; pending: { tool_call_id: string }[] } | undefined;
  await waitFor("the chat to wait on its client tool", async () => {
    const { rows } = await stack.t.db.pool.query<{ id: string; status: string; pending: { tool_call_id: string }[] }>(
      `select id, status::text, pending_tool_calls as pending from chat_public.chats where dynamic_tools @> '[{"name":"ask_user"}]'`);
    chat = rows[0];
    return chat?.status === "requires_action";
  });
  const callId = chat!.pending[0]!.tool_call_id;
  const answer = { id: 42, role: "assistant", metadata: { chatId: chat!.id },
    parts: [{ type: "dynamic-tool", toolName: "ask_user", toolCallId: callId, state: "output-available", input: {}, output: { answer: "yes" } }] };
  await refused(JSON.stringify({ id: "answer-numeric-id", messages: [user("x"), answer] }), 400, "messages[1].id");
  const { rows } = await stack.t.db.pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [chat!.id]);
  assert.is(rows[0]!.status, "requires_action", "nothing was submitted");
});

/** A valid body with one spot replaced by an arbitrary value or removed. */
const mutated = fc.tuple(
  fc.constantFrom("id", "messages", "messages.0", "messages.0.id", "messages.0.role", "messages.0.parts", "messages.0.parts.0",
    "messages.0.parts.0.type", "messages.0.parts.0.text", "messages.0.metadata", "trigger", "messageId", "responseFormat",
    "workspace", "dynamicTools", "modelConfigId"),
  fc.option(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: "binary" }), fc.constant("\ud800"))),
).map(([path, value]) => {
  const body: Record<string, unknown> = { id: "fuzz", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }] };
  const keys = path.split(".");
  let at: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
  if (value === null) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = value;
  return JSON.stringify(body);
});

test("fast-check: no body makes POST /api/chat or the response-format check answer 5xx or INTERNAL", async () => {
  const seen = new Set<number>();
  await fc.assert(fc.asyncProperty(fc.oneof(mutated, fc.json({ maxDepth: 4 }), fc.string({ unit: "binary" })), async (body) => {
    for (const path of ["/api/chat", "/api/response-format/check"]) {
      const response = await post(body, path);
      const text = await response.text();
      seen.add(response.status);
      assert.ok(response.status < 500, `${response.status} for ${body.slice(0, 200)}: ${text.slice(0, 200)}`);
      assert.not.match(text, /"code":"INTERNAL"/, body.slice(0, 200));
    }
  }), { numRuns: 150 });
  assert.ok(seen.has(400) && seen.has(200), `statuses seen: ${[...seen].join(",")}`);
});

test.run();
