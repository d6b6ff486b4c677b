// @chatd/client/ai-sdk with the real `ai` package against a live chatd (scripted provider): Output.object becomes a
// structured request whose receipt is the result, text and reasoning come from committed message parts, failed
// receipts are AI SDK errors with chatd's code, and SDK tools run as chatd dynamic tools across calls.
import { APICallError, AISDKError, generateText, Output, stepCountIs, streamText, tool } from "ai";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { ChatdReceiptError, createChatd, type ChatdProvider } from "@chatd/client/ai-sdk";
import { waitFor } from "../support/worker.ts";
import { finalize, script, startClientStack, type ClientStack } from "./stack.ts";

let stack: ClientStack;
let chatd: ChatdProvider;
test.before(async () => {
  stack = await startClientStack();
  chatd = createChatd({ url: stack.live.t.api.graphqlUrl, token: stack.token });
});
test.after(async () => {
  await chatd.client.close();
  await stack.close();
});

const Report = z.object({ files: z.number().int(), summary: z.string() });

test("generateText + Output.object: the receipt's exact value text is the text, the object is the output", async () => {
  const value = '{"files": 3, "summary": "three"}';
  const result = await generateText({ model: chatd("scripted"), prompt: script(finalize(value)), output: Output.object({ schema: Report }) });
  assert.equal(result.output, { files: 3, summary: "three" });
  const chatId = (result.providerMetadata?.chatd as { chatId: string }).chatId;
  const { rows } = await stack.live.t.db.pool.query<{ value_json: string }>(
    `select (structured_output -> 'value')::text as value_json from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'`, [chatId]);
  assert.is(result.text, rows[0]!.value_json);
  const calls = result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolName));
  assert.equal(calls, [], "the finalizer is never the caller's tool call");
  assert.ok((result.usage.inputTokens ?? 0) > 0, "usage from the committed steps");
});

test("streamText + Output.object: reasoning streams from the committed step, then the object", async () => {
  const result = streamText({
    model: chatd(), prompt: script({ reasoning: "thinking it over", ...finalize('{"files": 1, "summary": "one"}') }),
    output: Output.object({ schema: Report }),
  });
  const kinds: string[] = [];
  let reasoning = "";
  for await (const part of result.fullStream) {
    kinds.push(part.type);
    if (part.type === "reasoning-delta") reasoning += part.text;
  }
  assert.is(reasoning, "thinking it over");
  assert.equal(await result.output, { files: 1, summary: "one" });
  assert.ok(kinds.indexOf("reasoning-delta") < kinds.indexOf("text-delta"), kinds.join(","));
});

test("plain generateText returns the committed assistant text", async () => {
  const result = await generateText({ model: chatd("scripted"), prompt: script({ text: "plain answer" }) });
  assert.is(result.text, "plain answer");
  assert.is(result.finishReason, "stop");
});

test("a failed receipt is an AI SDK error carrying chatd's code", async () => {
  try {
    await generateText({ model: chatd(), prompt: script({ text: "I will not submit" }), output: Output.object({ schema: Report }) });
    assert.unreachable("the request failed in chatd");
  } catch (error) {
    assert.ok(ChatdReceiptError.isInstance(error), String(error));
    assert.ok(AISDKError.isInstance(error));
    assert.not.ok(APICallError.isInstance(error));
    const receipt = error as ChatdReceiptError;
    assert.is(receipt.status, "failed");
    const { rows } = await stack.live.t.db.pool.query<{ error_code: string }>(
      "select error_code from chat_public.structured_output_requests where id = $1", [receipt.requestId]);
    assert.is(receipt.code, rows[0]!.error_code);
  }
});

test("an SDK tool becomes a chatd dynamic tool: the chat pauses, the SDK runs it, the result goes back to the same chat", async () => {
  const seen: unknown[] = [];
  const lookup = tool({
    description: "looks a word up",
    inputSchema: z.object({ word: z.string() }),
    execute: async (input) => {
      seen.push(input);
      return { meaning: `the meaning of ${input.word}` };
    },
  });
  const result = await generateText({
    model: chatd("scripted"),
    prompt: script({ tool_calls: [{ name: "lookup", args: { word: "chatd" } }] }, finalize('{"files": 7, "summary": "looked up"}')),
    tools: { lookup },
    output: Output.object({ schema: Report }),
    stopWhen: stepCountIs(4),
  });
  assert.equal(seen, [{ word: "chatd" }]);
  assert.equal(result.output, { files: 7, summary: "looked up" });
  assert.is(result.steps.length, 2);
  const chatIds = new Set(result.steps.map((step) => (step.providerMetadata?.chatd as { chatId: string }).chatId));
  assert.is(chatIds.size, 1, "both calls ran in one chat");
  const [chatId] = [...chatIds];
  const { rows } = await stack.live.t.db.pool.query<{ content: { type: string; tool_name?: string; result?: unknown }[] }>(
    "select content from chat_public.chat_messages where chat_id = $1 and role = 'tool' order by id", [chatId]);
  const results = rows.flatMap((row) => row.content).filter((part) => part.tool_name === "lookup");
  assert.equal(results.map((part) => part.result), [{ meaning: "the meaning of chatd" }]);
  const names = result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolName));
  assert.equal(names, ["lookup"], "the caller sees its own tool only");
});

test("a paused chat continues from the messages alone: a new provider (no memory) submits the results to the same chat", async () => {
  const lookup = tool({ inputSchema: z.object({ word: z.string() }), execute: async ({ word }) => ({ length: word.length }) });
  const prompt = script({ tool_calls: [{ name: "lookup", args: { word: "exact" } }] }, finalize('{"files": 5, "summary": "resumed"}'));
  const first = await generateText({ model: chatd(), prompt, tools: { lookup }, output: Output.object({ schema: Report }), stopWhen: stepCountIs(1) });
  assert.is(first.finishReason, "tool-calls");
  const chatId = (first.providerMetadata?.chatd as { chatId: string }).chatId;
  const fresh = createChatd({ url: stack.live.t.api.graphqlUrl, token: stack.token });
  try {
    const second = await generateText({
      model: fresh(), messages: [{ role: "user", content: prompt }, ...first.response.messages],
      tools: { lookup }, output: Output.object({ schema: Report }),
    });
    assert.equal(second.output, { files: 5, summary: "resumed" });
    assert.is((second.providerMetadata?.chatd as { chatId: string }).chatId, chatId, "the same chat, found from the tool call's metadata");
  } finally {
    await fresh.client.close();
  }
});

test("Output.json (a json format without a schema) asks chatd for any JSON value", async () => {
  const result = await generateText({ model: chatd(), prompt: script(finalize('{"any": [1, "two", null]}')), output: Output.json() });
  assert.equal(result.output, { any: [1, "two", null] });
});

test("aborting the call interrupts the chat: the structured request ends canceled in chatd", async () => {
  const controller = new AbortController();
  const prompt = JSON.stringify({ marker: "abort-me", script: [{ delay_ms: 60_000, text: "too late" }] });
  const call = generateText({ model: chatd(), prompt, output: Output.object({ schema: Report }), abortSignal: controller.signal });
  // Barrier: the worker is inside the held step of this chat.
  const chatId = await waitFor("the chat to run", async () => {
    const { rows } = await stack.live.t.db.pool.query<{ id: string }>(
      `select c.id from chat_public.chats c join chat_private.chat_leases l on l.chat_id = c.id
       where c.status = 'running' and exists (select 1 from chat_public.chat_messages m where m.chat_id = c.id and m.content::text like '%abort-me%')`);
    return rows[0]?.id;
  });
  controller.abort();
  try {
    await call;
    assert.unreachable("the call was aborted");
  } catch (error) {
    assert.is((error as Error).name, "AbortError", String(error));
  }
  const receipt = await waitFor("the receipt", async () => {
    const { rows } = await stack.live.t.db.pool.query<{ status: string; code: string }>(
      `select structured_output ->> 'status' as status, structured_output -> 'error' ->> 'code' as code
       from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'`, [chatId]);
    return rows[0];
  });
  assert.equal(receipt, { status: "canceled", code: "interrupted" });
});

test.run();
