// A structured request with @chatd/client: the result is typed from the schema, and `numbers: "exact"` keeps a
// 23-digit integer and a long decimal exactly as the server validated them.
//
// Needs: chatd running (`npm start`), the experiment on (`npm run chatd -- experiments enable chat-structured-output`),
// and a token: export CHATD_TOKEN=$(npm run --silent chatd -- token --user alice | tail -n 1)
// Optional: CHATD_URL (default http://127.0.0.1:8787/graphql), CHATD_PROMPT.
// Run: npx node examples/structured-request.ts
//
// Without model keys chatd answers with its scripted provider, so the default prompt is a script that makes the
// "model" submit a value with big numbers. With a real model, ask in words: CHATD_PROMPT="Invent an invoice ...".
import { createChatdClient } from "@chatd/client";

const token = process.env.CHATD_TOKEN;
if (!token) throw new Error("set CHATD_TOKEN (npm run --silent chatd -- token --user alice | tail -n 1)");
const client = createChatdClient({ url: process.env.CHATD_URL ?? "http://127.0.0.1:8787/graphql", token });

const schema = {
  type: "object",
  properties: { invoice: { type: "integer" }, total: { type: "number" }, customer: { type: "string" } },
  required: ["invoice", "total", "customer"],
  additionalProperties: false,
} as const;

const value = '{"invoice": 12345678901234567890123, "total": 1234.5678901234567890123, "customer": "ACME"}';
const prompt = process.env.CHATD_PROMPT
  ?? JSON.stringify({ script: [{ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output": ${value}}` }] }] });

try {
  const result = await client.structured({ prompt, schema, name: "invoice", numbers: "exact" });
  if (result.status !== "succeeded") {
    console.error(`request ${result.requestId} ${result.status}: ${result.error.code} ${result.error.message}`);
    process.exitCode = 1;
  } else {
    // invoice is a bigint here (it does not fit a JavaScript number); total keeps every digit as a LosslessNumber.
    console.log(`request ${result.requestId} succeeded`);
    console.log(`invoice: ${result.value.invoice.toString()} (${typeof result.value.invoice})`);
    console.log(`total: ${result.value.total.toString()}`);
    console.log(`customer: ${result.value.customer}`);
    console.log(`valueJson: ${result.valueJson}`);
  }
} finally {
  await client.close();
}
