// A client-side tool through the AI SDK provider: the tool is declared to chatd as a dynamic tool, chatd pauses the
// chat when the model calls it, generateText runs `execute` here, and the next call submits the result to the same
// chat, which then finishes the structured request.
//
// Needs: chatd running (`npm start`), the experiment on (`npm run chatd -- experiments enable chat-structured-output`),
// a token (export CHATD_TOKEN=$(npm run --silent chatd -- token --user alice | tail -n 1)), and `ai` and `zod`.
// Optional: CHATD_URL, CHATD_MODEL, CHATD_PROMPT.
// Run: npx node examples/ai-sdk-client-tool.ts
//
// The default prompt is a scripted-provider script (call the tool, then submit); with a real model, ask in words:
// CHATD_PROMPT="What should I wear in Lisbon today?"
import { generateText, Output, stepCountIs, tool } from "ai";
import { z } from "zod";
import { createChatd } from "@chatd/client/ai-sdk";

const token = process.env.CHATD_TOKEN;
if (!token) throw new Error("set CHATD_TOKEN (npm run --silent chatd -- token --user alice | tail -n 1)");
const chatd = createChatd({ url: process.env.CHATD_URL ?? "http://127.0.0.1:8787/graphql", token });

const weather = tool({
  description: "The current weather in a city",
  inputSchema: z.object({ city: z.string() }),
  // Runs in this process, not in chatd.
  execute: async ({ city }) => {
    console.log(`tool weather(${city}) runs on the client`);
    return { city, celsius: 21, sky: "clear" };
  },
});

const prompt = process.env.CHATD_PROMPT ?? JSON.stringify({ script: [
  { tool_calls: [{ name: "weather", args: { city: "Lisbon" } }] },
  { tool_calls: [{ name: "coder_structured_output", args: { output: { advice: "t-shirt", celsius: 21 } } }] },
] });

try {
  const result = await generateText({
    model: chatd(process.env.CHATD_MODEL),
    prompt,
    tools: { weather },
    output: Output.object({ schema: z.object({ advice: z.string(), celsius: z.number() }) }),
    stopWhen: stepCountIs(5),
  });
  console.log("tool calls the caller saw:", result.steps.flatMap((step) => step.toolCalls.map((call) => call.toolName)).join(", "));
  console.log("object:", JSON.stringify(result.output));
} finally {
  await chatd.client.close();
}
