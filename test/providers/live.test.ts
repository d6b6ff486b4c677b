// Real-provider smoke tests. They run only when credentials are present; otherwise the
// file prints why it skipped and registers no test. Evidence from here is
// live; everything else in test/providers runs against mock servers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { streamStep, type ModelConfig, type ToolCallPart, type ToolSpec } from "../../src/providers/index.ts";

const echo: ToolSpec = {
  name: "echo",
  description: "Echo a word back. Always call this tool.",
  inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"], additionalProperties: false },
  strict: true,
};

const live: Array<{ env: string; config: (key: string) => ModelConfig }> = [
  {
    env: "OPENAI_API_KEY",
    config: (apiKey) => ({
      provider: "openai-responses",
      model: process.env.CHATD_LIVE_OPENAI_MODEL ?? "gpt-5-mini",
      apiKey,
      contextLimit: 128_000,
      options: { maxOutputTokens: 2000, reasoningEffort: "low" },
    }),
  },
  {
    env: "ANTHROPIC_API_KEY",
    config: (apiKey) => ({
      provider: "anthropic",
      model: process.env.CHATD_LIVE_ANTHROPIC_MODEL ?? "claude-sonnet-4-5",
      apiKey,
      contextLimit: 200_000,
      options: { maxOutputTokens: 1000, thinking: { type: "enabled", budgetTokens: 1024 } },
    }),
  },
];

for (const { env, config } of live) {
  const key = process.env[env];
  if (key == null || key === "") {
    console.log(`live provider test skipped: ${env} is not set`);
    continue;
  }
  test(`live ${config(key).provider}: a tool call with a strict tool and reasoning`, async () => {
    const r = await streamStep(config(key), {
      prompt: [{ role: "user", content: [{ type: "text", text: "Call the echo tool with the word 'chatd'." }] }],
      tools: [echo],
    });
    assert.is(r.error, undefined, r.error?.message);
    assert.is(r.finish, "tool-calls");
    const call = r.parts.find((p): p is ToolCallPart => p.type === "tool-call");
    assert.ok(call != null);
    assert.equal(JSON.parse(call.args), { word: "chatd" });
  });
}

test.run();
