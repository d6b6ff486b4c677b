// Sending one attempt (src/webhooks/send.ts), without a database: production refuses private and special-purpose
// targets (a literal address, and a name that resolves to one) before any byte leaves; a receiver that never answers
// holds the attempt only until the timeout; Retry-After is read as seconds or as a date.
import { createServer, type Server } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { retryAfterSeconds, sendWebhook } from "../../src/webhooks/send.ts";
import { isBlockedAddress } from "../../src/webhooks/target.ts";

const HEADERS = { "webhook-id": "evt_1", "webhook-timestamp": "1", "webhook-signature": "v1,x" };
let hits = 0;
let silent: Server;
let port = 0;

test.before(async () => {
  // Counts requests and never answers them.
  silent = createServer(() => {
    hits += 1;
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  port = (silent.address() as { port: number }).port;
});
test.after(() => new Promise<void>((resolve) => {
  silent.closeAllConnections();
  silent.close(() => resolve());
}));

test("the blocked ranges: loopback, private, link-local, CGNAT, unique-local, mapped; public addresses pass", () => {
  for (const address of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "224.0.0.1", "not-an-ip"]) {
    assert.ok(isBlockedAddress(address), address);
  }
  for (const address of ["93.184.216.34", "172.15.255.255", "172.32.0.1", "100.128.0.1", "2606:2800:220:1::1", "::ffff:93.184.216.34"]) {
    assert.not.ok(isBlockedAddress(address), address);
  }
});

test("production: a private target is refused before connecting, by literal address or by name", async () => {
  const before = hits;
  const literal = await sendWebhook(`https://127.0.0.1:${port}/`, "{}", HEADERS, { guard: true, userAgent: "t" });
  assert.is(literal.statusCode, null);
  assert.match(literal.error ?? "", /private or special-purpose/);
  const mapped = await sendWebhook(`https://[::ffff:127.0.0.1]:${port}/`, "{}", HEADERS, { guard: true, userAgent: "t" });
  assert.match(mapped.error ?? "", /private or special-purpose/);
  const named = await sendWebhook(`https://localhost:${port}/`, "{}", HEADERS, { guard: true, userAgent: "t" });
  assert.is(named.statusCode, null);
  assert.match(named.error ?? "", /resolves only to private or special-purpose addresses/);
  const plain = await sendWebhook(`http://93.184.216.34/`, "{}", HEADERS, { guard: true, userAgent: "t" });
  assert.match(plain.error ?? "", /https URLs only/);
  assert.is(hits, before);
});

test("a receiver that never answers holds the attempt only until the timeout", async () => {
  const before = hits;
  const attempt = await sendWebhook(`http://127.0.0.1:${port}/`, "{}", HEADERS, { guard: false, userAgent: "t", timeoutMs: 300 });
  assert.is(attempt.statusCode, null);
  assert.is(attempt.error, "no answer within 300 ms");
  assert.is(hits, before + 1);
});

test("Retry-After: seconds or an HTTP date; nonsense is ignored", () => {
  assert.is(retryAfterSeconds("120"), 120);
  assert.is(retryAfterSeconds(new Date(61_000).toUTCString(), 0), 61);
  assert.is(retryAfterSeconds("soon"), null);
  assert.is(retryAfterSeconds(undefined), null);
});

test.run();
