// `npm run bench:transcript`: what a transcript costs to read, and what one user holding streams costs everyone
// else. Transcripts of about 1, 4 and 16 MiB, made by the scripted provider and the real worker from steps of 4
// read_file calls of a 60 KiB file (under every tool result cap, so the stored rows are the same on any build); each
// is read whole as a client reads it, following `next` page by page until there is none (a build without pages
// answers one response), timed (median of 5) with the API's CPU time and its RSS and heap peaks above their level
// before. Then a bystander's p50/p95 of GET /health and of its own small transcript: alone, while one user holds the
// per-user stream cap with streams that never read, and while that user reads its largest transcript 4 times at
// once. The API runs in this process; the worker in a child. The same file runs on an older checkout for a
// baseline (notes: the commands).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { get } from "node:http";
import { connect, type Socket } from "node:net";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { join } from "node:path";
import pg from "pg";
import { signToken } from "../src/api/auth.ts";
import { startApi } from "../src/api/server.ts";
import { DEFAULT_STREAM_LIMITS } from "../src/api/http/streams.ts";
import { projectRoot } from "../src/db/database.ts";
import { benchDatabase, benchFolder, percentile, printTable } from "./support.ts";

const FILE_BYTES = 60 * 1024;
const CALLS_PER_STEP = 4;
const SIZES_MIB = [1, 4, 16];
const PROBES = 200;
// A collection before each measurement, so a peak above the level before is this read's own, not earlier garbage.
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;
const load = () => loadavg().map((value) => value.toFixed(2)).join(", ");
console.log(`load average at start: ${load()}`);

const db = await benchDatabase("transcript");
const root = benchFolder("chatd-bench-transcript-");
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

/** The whole transcript as a client reads it: every page, following `next`; bytes and pages received. */
async function messages(token: string, chatId: string, maxPages = Infinity): Promise<{ bytes: number; pages: number }> {
  let bytes = 0;
  let pages = 0;
  let after: string | null = null;
  do {
    const body = await request(`/api/chat/${chatId}/messages${after === null ? "" : `?after=${after}`}`, token);
    bytes += body.length;
    pages += 1;
    // `next` is the body's last member: read from its tail, so the client's own cost stays out of the figures.
    after = /"next":"([^"]+)"\}$/.exec(body.slice(-64))?.[1] ?? null;
  } while (after !== null && pages < maxPages);
  return { bytes, pages };
}

interface Measured { ms: number; cpuMs: number; rssMiB: number; heapMiB: number; bytes: number; pages: number }

/** `fn`'s wall and CPU milliseconds (this process: the API and the client), and the RSS and heap peaks above their
 * level before, sampled every 5 ms. */
async function measured(fn: () => Promise<{ bytes: number; pages: number }>): Promise<Measured> {
  collect();
  const rss = process.memoryUsage.rss();
  const heap = process.memoryUsage().heapUsed;
  let [rssPeak, heapPeak] = [rss, heap];
  const sample = () => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, 5);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { bytes, pages } = await fn();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  clearInterval(sampler);
  sample();
  return { ms, cpuMs: (used.user + used.system) / 1000, rssMiB: (rssPeak - rss) / 2 ** 20, heapMiB: (heapPeak - heap) / 2 ** 20, bytes, pages };
}

const rows: [string, string][] = [];
const report = (row: [string, string]) => {
  rows.push(row);
  console.log(`${row[0]}: ${row[1]}`);
};
let largest = "";
for (const mib of SIZES_MIB) {
  const steps = Math.ceil((mib * 2 ** 20) / (CALLS_PER_STEP * FILE_BYTES));
  const step = { tool_calls: Array.from({ length: CALLS_PER_STEP }, () => ({ name: "read_file", args: { path: "big.txt" } })) };
  const chatId = await createChat(heavy, [...Array.from({ length: steps }, () => step), { text: "done" }]);
  await settled(chatId, "waiting");
  largest = chatId;
  await messages(heavy, chatId); // warm
  const runs: Measured[] = [];
  for (let i = 0; i < 5; i++) runs.push(await measured(() => messages(heavy, chatId)));
  runs.sort((a, b) => a.ms - b.ms);
  const median = runs[2]!;
  const first: Measured[] = [];
  for (let i = 0; i < 5; i++) first.push(await measured(() => messages(heavy, chatId, 1)));
  first.sort((a, b) => a.ms - b.ms);
  const { rows: [stored] } = await pool.query<{ bytes: string }>(
    "select coalesce(sum(octet_length(content::text)), 0) as bytes from chat_public.chat_messages where chat_id = $1", [chatId]);
  report([`read ${mib} MiB: ${steps * CALLS_PER_STEP} read_file (${(Number(stored!.bytes) / 2 ** 20).toFixed(1)} MiB stored)`,
    `${median.ms.toFixed(0)} ms median, CPU ${median.cpuMs.toFixed(0)} ms, RSS +${Math.max(...runs.map((r) => r.rssMiB)).toFixed(0)} MiB, `
    + `heap +${Math.max(...runs.map((r) => r.heapMiB)).toFixed(0)} MiB peak, ${(median.bytes / 2 ** 20).toFixed(1)} MiB in ${median.pages} page(s)`]);
  report([`  one response (the first page) of ${mib} MiB`, `${first[2]!.ms.toFixed(0)} ms median, CPU ${first[2]!.cpuMs.toFixed(0)} ms, `
    + `RSS +${Math.max(...first.map((r) => r.rssMiB)).toFixed(0)} MiB, heap +${Math.max(...first.map((r) => r.heapMiB)).toFixed(0)} MiB peak, `
    + `${(first[2]!.bytes / 2 ** 20).toFixed(1)} MiB`]);
}

const small = await createChat(bystander, [{ text: "hello" }]);
await settled(small, "waiting");

/** A GET on a connection of its own (a pooled one may be closed by the server's keep-alive timeout meanwhile). */
function request(path: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(`${api.url}${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk)).on("end", () => resolve(Buffer.concat(chunks).toString("utf8"))).on("error", reject);
    }).on("error", reject);
  });
}

async function probe(label: string): Promise<void> {
  for (const [what, path] of [["/health", "/health"], ["own messages", `/api/chat/${small}/messages`]] as const) {
    const times: number[] = [];
    // The API's event-loop delay beside the latency: a stalled loop and a slow database look alike from outside.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    for (let i = 0; i < PROBES; i++) {
      const started = performance.now();
      await request(path, bystander);
      times.push(performance.now() - started);
    }
    loop.disable();
    times.sort((a, b) => a - b);
    report([`bystander ${what}, ${label}`, `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms; `
      + `event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`]);
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
await probe("4 whole reads of 16 MiB at once");
reading = false;
await Promise.all(readers);

for (const socket of sockets) socket.destroy();
console.log(`bench:transcript (Node ${process.version}, ${PROBES} probes each; load average at end: ${load()})`);
printTable(rows);
await api.close();
await pool.end();
const exited = new Promise((resolve) => worker.on("exit", resolve));
worker.kill("SIGTERM");
await exited;
await db.close();
