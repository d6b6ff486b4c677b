// The shared stream mechanism (src/api/http/streams.ts) on real sockets: a client that stops reading is dropped at
// the send deadline with its buffers freed, the producer waits for the client (back-pressure) instead of queueing,
// a reading client gets everything, the token's expiry ends a stream, and the caps hold at N and refuse N + 1.
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { HttpError } from "../../src/api/http/errors.ts";
import { BoundedSender, StreamRegistry, streamLimitsFromEnv, type StreamEnd } from "../../src/api/http/streams.ts";

const CHUNK = "x".repeat(64 * 1024);
const TOTAL_CHUNKS = 512; // 32 MiB, far more than loopback's socket buffers hold

const servers: Server[] = [];
test.after.each(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

interface Produced { written: number; peakQueued: number; end: StreamEnd | null; freed: boolean }

/** A server whose one response writes TOTAL_CHUNKS chunks as fast as the sender lets it. */
async function producingServer(deadlineMs: number, expiresAtMs?: number): Promise<{ server: Server; port: number; produced: Promise<Produced> }> {
  let resolve!: (value: Produced) => void;
  const produced = new Promise<Produced>((r) => (resolve = r));
  const server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const sender = new BoundedSender(res, { sendDeadlineMs: deadlineMs, expiresAtMs });
    const connection = res.socket!;
    void (async () => {
      let written = 0;
      let peakQueued = 0;
      while (written < TOTAL_CHUNKS && sender.write(`data: ${CHUNK}\n\n`)) {
        written += 1;
        peakQueued = Math.max(peakQueued, res.writableLength);
        if (!await sender.drained()) break;
      }
      const end = sender.ended;
      sender.end();
      if (!res.destroyed) await once(res, "close");
      resolve({ written, peakQueued, end, freed: res.destroyed && connection.destroyed });
    })();
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port, produced };
}

function rawGet(port: number): Socket {
  const socket = connect(port, "127.0.0.1");
  socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  return socket;
}

test("a client that never reads is dropped at the send deadline; the producer waited instead of queueing, and the buffers are freed", async () => {
  const { port, produced } = await producingServer(300);
  const socket = rawGet(port);
  socket.pause(); // reads nothing, ever
  const result = await produced;
  assert.is(result.end, "send-deadline");
  assert.ok(result.written < TOTAL_CHUNKS / 4, `stopped after ${result.written} of ${TOTAL_CHUNKS} chunks`);
  assert.ok(result.peakQueued <= 2 * (CHUNK.length + 8) + 16 * 1024, `at most one chunk over the high-water mark queued (peak ${result.peakQueued})`);
  assert.ok(result.freed, "the response and its socket are destroyed (their buffers go with them)");
  socket.destroy();
});

test("a client that reads slowly but steadily gets every chunk: back-pressure, not a drop", async () => {
  const { port, produced } = await producingServer(5_000);
  const socket = rawGet(port);
  let received = 0;
  socket.on("data", (data: Buffer) => {
    received += data.length;
    socket.pause();
    setImmediate(() => socket.resume());
  });
  const result = await produced;
  assert.equal([result.end, result.written], [null, TOTAL_CHUNKS], "written to the end, never stopped");
  await once(socket, "end");
  assert.ok(received > TOTAL_CHUNKS * CHUNK.length, `received ${received} bytes`);
  socket.destroy();
});

test("the token's expiry ends an open stream even while the client reads", async () => {
  const { port, produced } = await producingServer(5_000, Date.now() + 200);
  const socket = rawGet(port);
  socket.on("data", () => {
    socket.pause();
    setTimeout(() => socket.resume(), 5);
  });
  const result = await produced;
  assert.is(result.end, "token-expired");
  assert.ok(result.written < TOTAL_CHUNKS);
  socket.destroy();
});

test("caps: N streams per user and per process are granted, N + 1 is 429 TOO_MANY_STREAMS; a release frees the slot", () => {
  const registry = new StreamRegistry({ perUser: 2, perProcess: 3, sendDeadlineMs: 1000 });
  const refused = (userId: string) => {
    try {
      registry.acquire(userId);
    } catch (error) {
      assert.instance(error, HttpError);
      assert.equal([(error as HttpError).status, (error as HttpError).code, (error as HttpError).headers["retry-after"]], [429, "TOO_MANY_STREAMS", "1"]);
      return true;
    }
    return false;
  };
  const a1 = registry.acquire("alice");
  registry.acquire("alice");
  assert.ok(refused("alice"), "a third stream of one user");
  registry.acquire("bob");
  assert.ok(refused("carol"), "a fourth stream of the process");
  a1.release();
  a1.release();
  assert.is(registry.open, 2, "a release counts once");
  assert.not.ok(refused("alice"));
});

test("settings: defaults, values from the environment, and a bad value refused at start", () => {
  assert.equal(streamLimitsFromEnv({}), { perUser: 16, perProcess: 1000, sendDeadlineMs: 30_000 });
  assert.equal(streamLimitsFromEnv({ CHATD_STREAMS_PER_USER: "3", CHATD_STREAMS_PER_PROCESS: "9", CHATD_STREAM_SEND_DEADLINE_MS: "500" }),
    { perUser: 3, perProcess: 9, sendDeadlineMs: 500 });
  assert.throws(() => streamLimitsFromEnv({ CHATD_STREAMS_PER_USER: "0" }), /CHATD_STREAMS_PER_USER must be a positive integer/);
});

test.run();
