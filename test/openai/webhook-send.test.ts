// Sending one attempt (src/webhooks/send.ts), without a database: production refuses private and special-purpose
// targets (a literal address, and a name that resolves to one) before any byte leaves; a receiver that never answers
// holds the attempt only until the timeout, and so does one that answers its head and then trickles the body; an
// answer body past 64 KiB is cut off, not buffered; Retry-After is read as seconds or as a date.
import { createServer, type Server, type ServerResponse } from "node:http";
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

/** A receiver whose one answer is written by `answer`; closed after the test. */
async function receiver(answer: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, server };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

test("a receiver that answers 200 and then trickles its body is cut at the timeout and not delivered", async () => {
  let ticker: NodeJS.Timeout | undefined;
  const { url, server } = await receiver((res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    ticker = setInterval(() => res.write("."), 20);
  });
  try {
    const started = process.hrtime.bigint();
    const attempt = await sendWebhook(url, "{}", HEADERS, { guard: false, userAgent: "t", timeoutMs: 300 });
    assert.equal(attempt, { statusCode: null, retryAfterSeconds: null, error: "no answer within 300 ms" });
    // Bounded by the timeout, not by the receiver (which would trickle forever).
    assert.ok(process.hrtime.bigint() - started < 5_000_000_000n);
  } finally {
    clearInterval(ticker);
    await close(server);
  }
});

test("an answer body past 64 KiB is cut off: the connection is dropped instead of buffering it", async () => {
  let written = 0;
  const { url, server } = await receiver((res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = Buffer.alloc(16 * 1024, 120);
    const pump = () => {
      while (written < 64 * 1024 * 1024 && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
  try {
    const attempt = await sendWebhook(url, "{}", HEADERS, { guard: false, userAgent: "t", timeoutMs: 10_000 });
    assert.is(attempt.statusCode, 200);
    assert.ok(written < 64 * 1024 * 1024, `the receiver wrote ${written} bytes: all of it was read`);
  } finally {
    await close(server);
  }
});

test("Retry-After: seconds or an HTTP date; nonsense is ignored", () => {
  assert.is(retryAfterSeconds("120"), 120);
  assert.is(retryAfterSeconds(new Date(61_000).toUTCString(), 0), 61);
  assert.is(retryAfterSeconds("soon"), null);
  assert.is(retryAfterSeconds(undefined), null);
});

test.run();
