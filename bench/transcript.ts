// `npm run bench:transcript`: what a transcript costs to read, and what one user holding streams costs everyone
// else. Turns of 4, 16 and 64 read_file calls of a 256 KiB file (the scripted provider, the real worker and API;
// read_file returns at most its own cap of the file, so the stored size is printed); GET /api/chat/:id/messages is timed on each (median of 5) with the API process's RSS growth and the
// response's size. Then a bystander's p50/p95 of GET /health and of its own small transcript: alone, while one
// user holds the per-user stream cap with streams that never read, and while that user reads its 16 MiB transcript
// 4 times at once. The API runs in this process; the worker in a child.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { signToken } from "../src/api/auth.ts";
import { startApi } from "../src/api/server.ts";
import { DEFAULT_STREAM_LIMITS } from "../src/api/http/streams.ts";
import { projectRoot } from "../src/db/database.ts";
import { benchDatabase, percentile, printTable } from "./support.ts";

const FILE_BYTES = 256 * 1024;
const SIZES_MIB = [1, 4, 16];
const PROBES = 200;

const db = await benchDatabase("transcript");
const root = mkdtempSync(join(tmpdir(), "chatd-bench-transcript-"));
mkdirSync(join(root, "ws"));
writeFileSync(join(root, "ws", "big.txt"), "0123456789abcdef".repeat(FILE_BYTES / 16));
const worker = spawn(process.execPath, [join(projectRoot, "bench", "worker-process.ts")], {
  env: { ...process.env, DATABASE_URL: db.url, CHATD_WORKSPACES_ROOT: root, CHATD_BENCH_CONCURRENCY: "4" }, stdio: ["ignore", "ignore", "inherit"],
});
const pool = new pg.Pool({ connectionString: db.url, max: 2 });
const secret = randomBytes(32).toString("hex");
const api = await startApi({ pool, port: 0, host: "127.0.0.1", jwtSecret: secret, development: false });
const userToken = async (name: string) => {
  const { rows } = await pool.query<{ id: string }>("insert into chat_public.users (name) values ($1) returning id", [name]);
  return signToken(secret, rows[0]!.id);
};
const [heavy, bystander] = [await userToken("heavy"), await userToken("bystander")];

async function createChat(token: string, steps: object[]): Promise<string> {
  const response = await fetch(api.graphqlUrl, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: `mutation($c: JSON!) { createChat(input: {content: $c, workspace: "ws"}) { result { chatId } } }`,
      variables: { c: [{ type: "text", text: JSON.stringify({ script: steps }) }] } }) });
  const body = await response.json() as { data?: { createChat: { result: { chatId: string } } }; errors?: unknown };
  if (!body.data) throw new Error(`createChat failed: ${JSON.stringify(body.errors)}`);
  return body.data.createChat.result.chatId;
}

async function settled(chatId: string, status: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [chatId]);
    if (rows[0]?.status === status) return;
    if (Date.now() > deadline) throw new Error(`chat ${chatId} never reached ${status} (is ${rows[0]?.status})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const messages = (token: string, chatId: string) => request(`/api/chat/${chatId}/messages`, token);

/** Milliseconds of `fn`, and the API process's RSS peak above its level before, sampled every 5 ms. */
async function measured(fn: () => Promise<number>): Promise<{ ms: number; rssMiB: number; bytes: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const started = performance.now();
  const bytes = await fn();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { ms, rssMiB: (peak - before) / 2 ** 20, bytes };
}

const rows: [string, string][] = [];
const report = (row: [string, string]) => {
  rows.push(row);
  console.log(`${row[0]}: ${row[1]}`);
};
let largest = "";
for (const mib of SIZES_MIB) {
  const calls = (mib * 2 ** 20) / FILE_BYTES;
  const chatId = await createChat(heavy, [{ tool_calls: Array.from({ length: calls }, () => ({ name: "read_file", args: { path: "big.txt" } })) },
    { text: "done" }]);
  await settled(chatId, "waiting");
  largest = chatId;
  await messages(heavy, chatId); // warm
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await measured(() => messages(heavy, chatId)));
  runs.sort((a, b) => a.ms - b.ms);
  const median = runs[2]!;
  const { rows: [stored] } = await pool.query<{ bytes: string }>(
    "select coalesce(sum(octet_length(content::text)), 0) as bytes from chat_public.chat_messages where chat_id = $1", [chatId]);
  report([`GET messages, ${calls} read_file (${(Number(stored!.bytes) / 2 ** 20).toFixed(1)} MiB stored)`,
    `${median.ms.toFixed(0)} ms median, RSS +${Math.max(...runs.map((r) => r.rssMiB)).toFixed(0)} MiB peak, ${(median.bytes / 2 ** 20).toFixed(1)} MiB sent`]);
}

const small = await createChat(bystander, [{ text: "hello" }]);
await settled(small, "waiting");

/** A GET on a connection of its own (a pooled one may be closed by the server's keep-alive timeout meanwhile). */
function request(path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${api.url}${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length)).on("end", () => resolve(bytes)).on("error", reject);
    }).on("error", reject);
  });
}

async function probe(label: string): Promise<void> {
  for (const [what, path] of [["/health", "/health"], ["own messages", `/api/chat/${small}/messages`]] as const) {
    const times: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const started = performance.now();
      await request(path, bystander);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    report([`bystander ${what}, ${label}`, `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`]);
  }
}

await probe("alone");

// A running turn (a 10-minute step) to resume, and streams on it that never read, up to the cap and beyond.
const running = await createChat(heavy, [{ text: "slow", delay_ms: 600_000 }]);
await settled(running, "running");
const sockets: Socket[] = [];
const statuses: number[] = [];
for (let i = 0; i < DEFAULT_STREAM_LIMITS.perUser + 8; i++) {
  const socket = connect(Number(new URL(api.url).port), "127.0.0.1");
  socket.write(`GET /api/chat/${running}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${heavy}\r\n\r\n`);
  statuses.push(await new Promise<number>((resolve) => socket.once("data", (data: Buffer) => resolve(Number(data.toString("latin1").split(" ")[1])))));
  socket.pause();
  sockets.push(socket);
}
report([`heavy user's ${statuses.length} stream opens`, `${statuses.filter((s) => s === 200).length} × 200, ${statuses.filter((s) => s === 429).length} × 429 (cap ${DEFAULT_STREAM_LIMITS.perUser}/user)`]);
await probe(`${api.openStreams()} streams held`);

let reading = true;
const readers = Array.from({ length: 4 }, async () => {
  while (reading) await messages(heavy, largest);
});
await probe("4 reads of 16 MiB at once");
reading = false;
await Promise.all(readers);

for (const socket of sockets) socket.destroy();
console.log(`bench:transcript (Node ${process.version}, ${PROBES} probes each)`);
printTable(rows);
await api.close();
await pool.end();
const exited = new Promise((resolve) => worker.on("exit", resolve));
worker.kill("SIGTERM");
await exited;
await db.close();
