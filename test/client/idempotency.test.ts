// @chatd/client's writes (create, send) always carry an idempotency key and are sent again with the same key when
// chatd answers UNAVAILABLE (its database restarting or failing over) or does not answer at all; a refusal is not
// retried. A scripted transport stands in for chatd here.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ChatsApi } from "../../client/src/chats.ts";
import { ChatdNetworkError, requestError } from "../../client/src/errors.ts";
import type { Transport } from "../../client/src/transport.ts";

type Answer = Error | Record<string, unknown>;

/** A transport that answers each request with the next scripted answer and records the variables it was sent. */
function scripted(answers: Answer[]): { transport: Transport; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const transport = {
    request: (_query: string, variables: Record<string, unknown>) => {
      sent.push(variables.input as Record<string, unknown>);
      const answer = answers.shift();
      if (answer == null) throw new Error("no more answers");
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  } as unknown as Transport;
  return { transport, sent };
}

const ok = (field: string) => ({ [field]: { result: { chatId: "c1", messageId: "m1" } } });
const unavailable = () => requestError([{ message: "the database is unavailable", extensions: { code: "UNAVAILABLE", retryable: true, outcome: "unknown" } }]);

test("send without a key gets one, and a lost answer is retried with the same key", async () => {
  const { transport, sent } = scripted([new ChatdNetworkError("socket hang up", null), unavailable(), ok("sendChatMessage")]);
  const input = await new ChatsApi(transport).send("c1", { prompt: "hi" });
  assert.is(input.messageId, "m1");
  assert.is(sent.length, 3);
  assert.type(sent[0]!.idempotencyKey, "string");
  assert.ok((sent[0]!.idempotencyKey as string).length > 0);
  assert.ok(sent.every((input) => input.idempotencyKey === sent[0]!.idempotencyKey), "one key for every attempt");
});

test("create keeps the caller's key across retries", async () => {
  const { transport, sent } = scripted([unavailable(), ok("createChat")]);
  await new ChatsApi(transport).create({ prompt: "hi", idempotencyKey: "mine" });
  assert.equal(sent.map((input) => input.idempotencyKey), ["mine", "mine"]);
});

test("two sends get two keys", async () => {
  const { transport, sent } = scripted([ok("sendChatMessage"), ok("sendChatMessage")]);
  const chats = new ChatsApi(transport);
  await chats.send("c1", { prompt: "a" });
  await chats.send("c1", { prompt: "b" });
  assert.is.not(sent[0]!.idempotencyKey, sent[1]!.idempotencyKey);
});

test("a refusal is not retried", async () => {
  const refusal = requestError([{ message: "chat not found", extensions: { code: "NOT_FOUND" } }]);
  const { transport, sent } = scripted([refusal, ok("sendChatMessage")]);
  try {
    await new ChatsApi(transport).send("c1", { prompt: "hi" });
    assert.unreachable("the refusal is thrown");
  } catch (error) {
    assert.is((error as { code?: string }).code, "NOT_FOUND");
  }
  assert.is(sent.length, 1);
});

test.run();
