// The AI SDK's own generateText with Output.object, run in chatd through @chatd/client/ai-sdk: the request is a chatd
// structured request, and the object is the server-validated value of its receipt.
//
// Needs: chatd running (`npm start`), the experiment on (`npm run chatd -- experiments enable chat-structured-output`),
// a token (export CHATD_TOKEN=$(npm run --silent chatd -- token --user alice | tail -n 1)), and the `ai` and `zod`
// packages (this repository has both). Optional: CHATD_URL, CHATD_MODEL (a chatd model config id; default: the
// server's default model).
// Run: npx node examples/ai-sdk-generate-text.ts
//
// With the scripted provider the "model" submits an example value built from the schema.
import { generateText, Output } from "ai";
import { z } from "zod";
import { createChatd } from "@chatd/client/ai-sdk";

const token = process.env.CHATD_TOKEN;
if (!token) throw new Error("set CHATD_TOKEN (npm run --silent chatd -- token --user alice | tail -n 1)");
const chatd = createChatd({ url: process.env.CHATD_URL ?? "http://127.0.0.1:8787/graphql", token });

const Release = z.object({
  version: z.string().describe("semantic version"),
  highlights: z.array(z.string()).describe("one line each"),
  breaking: z.boolean(),
});

try {
  const { output, text, usage, providerMetadata } = await generateText({
    model: chatd(process.env.CHATD_MODEL),
    prompt: "Write release notes for chatd's TypeScript client.",
    output: Output.object({ schema: Release }),
  });
  console.log("chat:", (providerMetadata?.chatd as { chatId: string }).chatId);
  console.log("object:", JSON.stringify(output));
  console.log("exact value text:", text);
  console.log("usage:", JSON.stringify(usage));
} finally {
  await chatd.client.close();
}
