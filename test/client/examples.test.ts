// Every example in examples/ runs as its own process against a live stack (the real server, PostgreSQL and a worker
// with the scripted provider), exactly as its header says to run it, with CHATD_URL and CHATD_TOKEN pointing here.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

let stack: LiveStack;
let env: NodeJS.ProcessEnv;

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  env = { ...process.env, CHATD_URL: stack.t.api.graphqlUrl, CHATD_TOKEN: stack.users.alice!.token, DATABASE_URL: stack.t.db.url,
    CHATD_BIN: `${process.execPath} ${projectRoot}/src/cli/main.ts`, CHATD_LOG_LEVEL: "warn" };
});
test.after(async () => { await stack.close(); });

function run(command: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: projectRoot, env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on("data", (chunk: Buffer) => { err += chunk.toString(); });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const node = (file: string, extra?: NodeJS.ProcessEnv) => run(process.execPath, [file], extra);

test("structured-request.ts: the 23-digit integer and the long decimal come back exact", async () => {
  const { code, out, err } = await node("examples/structured-request.ts");
  assert.is(code, 0, err);
  assert.match(out, "invoice: 12345678901234567890123 (bigint)");
  assert.match(out, "total: 1234.5678901234567890123");
});

test("ai-sdk-generate-text.ts: generateText + Output.object returns the receipt's object", async () => {
  const { code, out, err } = await node("examples/ai-sdk-generate-text.ts");
  assert.is(code, 0, err);
  const object = JSON.parse(/^object: (.*)$/m.exec(out)![1]!) as Record<string, unknown>;
  assert.equal(Object.keys(object).sort(), ["breaking", "highlights", "version"]);
});

test("ai-sdk-client-tool.ts: the tool runs on the client and the structured request finishes", async () => {
  const { code, out, err } = await node("examples/ai-sdk-client-tool.ts");
  assert.is(code, 0, err);
  assert.match(out, "tool weather(Lisbon) runs on the client");
  assert.match(out, "tool calls the caller saw: weather\n");
  assert.match(out, 'object: {"advice":"t-shirt","celsius":21}');
});

test("batch/run.sh: schema file + prompts.jsonl through the CLI, one exact result per line", async () => {
  const { code, out, err } = await run("bash", ["examples/batch/run.sh"]);
  assert.is(code, 0, err);
  const results = out.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { status: string });
  assert.is(results.length, 3, out);
  assert.ok(results.every((result) => result.status === "succeeded"), out);
});

/** Lines of a child's stdout as they come. */
function lines(child: ChildProcess): () => Promise<string> {
  const reader = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return async () => {
    const next = await reader.next();
    if (next.done) throw new Error("the receiver exited");
    return next.value as string;
  };
}

test("stop-hook-receiver.ts: chatd's signed delivery is verified; a forged one is refused", async () => {
  const secret = "example-secret-of-more-than-16-chars";
  const receiver = spawn(process.execPath, ["examples/stop-hook-receiver.ts"], {
    cwd: projectRoot, env: { ...env, CHATD_HOOK_SECRET: secret, PORT: "0" }, stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const next = lines(receiver);
    const url = /listening on (\S+)/.exec(await next())![1]!;
    const forged = await fetch(url, { method: "POST", body: "{}", headers: { "chatd-signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}` } });
    assert.is(forged.status, 401);
    assert.match(await next(), "bad signature");
    const { rows } = await stack.t.db.pool.query<{ id: string }>(
      "insert into chat_private.stop_hooks (name, url, timeout_ms) values ('example', $1, 10000) returning id", [url]);
    await stack.t.db.pool.query("insert into chat_private.stop_hook_secrets (hook_id, secret) values ($1, $2)", [rows[0]!.id, secret]);
    const structured = await node("examples/structured-request.ts");
    assert.is(structured.code, 0, structured.err);
    const delivery = await next();
    assert.match(delivery, /^verified delivery \S+: chat \S+, structured request \S+$/);
    assert.match(await next(), "12345678901234567890123");
  } finally {
    await stack.t.db.pool.query("update chat_private.stop_hooks set enabled = false where name = 'example'");
    receiver.kill("SIGTERM");
  }
});

test.run();
