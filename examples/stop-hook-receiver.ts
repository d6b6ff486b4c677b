// A stop-hook receiver: chatd POSTs to it when a turn is about to finish. It verifies the `chatd-signature` header
// (HMAC-SHA256 of "<t>.<raw body>", refusing deliveries older than 5 minutes) over the raw bytes before parsing
// them, logs the delivery, and answers with nothing to add (204). A bad signature gets 401.
//
// Needs: Node 22 and a secret of 16+ characters in CHATD_HOOK_SECRET. Optional: PORT (default 8790; 0 picks one).
// Run: CHATD_HOOK_SECRET=a-long-random-secret-of-16+-chars node examples/stop-hook-receiver.ts
// Then register it with chatd (npm run chatd -- psql):
//   insert into chat_private.stop_hooks (name, url, timeout_ms) values ('example', 'http://127.0.0.1:8790/stop', 10000);
//   insert into chat_private.stop_hook_secrets (hook_id, secret)
//     select id, 'a-long-random-secret-of-16+-chars' from chat_private.stop_hooks where name = 'example';
// and finish any turn (e.g. node examples/structured-request.ts). Switch it off again:
//   update chat_private.stop_hooks set enabled = false where name = 'example';
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const secret = process.env.CHATD_HOOK_SECRET;
if (!secret || secret.length < 16) throw new Error("set CHATD_HOOK_SECRET to the hook's secret (16+ characters)");

function verify(rawBody: string, header: string): boolean {
  const fields = new Map(header.split(",").map((kv) => [kv.slice(0, kv.indexOf("=")).trim(), kv.slice(kv.indexOf("=") + 1).trim()]));
  const t = Number(fields.get("t"));
  const given = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > 300 || !/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = createHmac("sha256", secret!).update(`${t}.${rawBody}`, "utf8").digest();
  return timingSafeEqual(expected, Buffer.from(given, "hex"));
}

const server = createServer(async (req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  if (!verify(raw, String(req.headers["chatd-signature"] ?? ""))) {
    console.log(`refused delivery ${String(req.headers["chatd-delivery"])}: bad signature`);
    res.writeHead(401).end();
    return;
  }
  const payload = JSON.parse(raw) as { chat_id: string; structured_output: { request_id: string } | null };
  // The raw body keeps the candidate's numbers exactly; JSON.parse would round big ones.
  console.log(`verified delivery ${String(req.headers["chatd-delivery"])}: chat ${payload.chat_id}`
    + (payload.structured_output ? `, structured request ${payload.structured_output.request_id}` : ", plain turn"));
  console.log(`body: ${raw}`);
  // 204: nothing to add. Answer {"model_context": "..."} (200) to make the model continue once.
  res.writeHead(204).end();
});

server.listen(Number(process.env.PORT ?? 8790), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  console.log(`stop-hook receiver listening on http://127.0.0.1:${port}/stop`);
});
process.on("SIGTERM", () => server.close());
process.on("SIGINT", () => server.close());
