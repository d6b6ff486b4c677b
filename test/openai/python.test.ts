// The official `openai` Python SDK (pinned in scripts/openai-python/requirements.txt, installed by .ci/run into
// .chatd/openai-venv) drives a real chatd: responses.parse with Pydantic models (big int exact; nested with Optional,
// enum, Decimal and a list of models; recursive), stream and resume, the function tool round trip, a follow-up, background
// create/retrieve/cancel, chat.completions.parse, typed errors, and `client.webhooks.unwrap` of a delivery chatd
// sent. scripts/openai-python/sdk_check.py holds the checks (outside test/, whose every file the runner imports).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { newSecret } from "../../src/webhooks/signing.ts";
import { waitFor } from "../support/worker.ts";
import { startReceiver, type Receiver } from "./receiver.ts";
import { startLiveStack, type LiveStack } from "./sdk.ts";

const PYTHON = process.env.CHATD_TEST_PYTHON ?? join(projectRoot, ".chatd", "openai-venv", "bin", "python");

let stack: LiveStack;
let receiver: Receiver;
const secret = newSecret();
test.before(async () => {
  stack = await startLiveStack(["alice"]);
  receiver = await startReceiver();
  await stack.t.db.pool.query("select chat_private.webhook_add($1, $2, null, $3)", [stack.users.alice!.id, receiver.url, secret]);
});
test.after(async () => {
  await receiver.close();
  await stack.close();
});

function runPython(script: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [script, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

const SCRIPT = join(projectRoot, "scripts", "openai-python", "sdk_check.py");

test("the Python SDK's parse, stream, function tools, background, cancel, chat parse and errors work against chatd", async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/openai-python/env.sh (CI's .ci/run does)`);
  const result = await runPython(SCRIPT, { CHATD_BASE_URL: `${stack.t.api.url}/v1`, CHATD_TOKEN: stack.users.alice!.token });
  assert.is(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim().split("\n"), ["ok parse", "ok parse_nested", "ok stream_resume",
    "ok function_tool_round_trip", "ok follow_up", "ok background_retrieve_cancel", "ok chat_completions_parse", "ok errors"]);
});

test("the Python SDK's webhooks.unwrap verifies a delivery chatd sent, and refuses it tampered", async () => {
  const hook = await waitFor("a response.completed delivery", async () =>
    receiver.received.find((r) => r.body.includes(`"type":"response.completed"`)));
  const result = await runPython(SCRIPT, { CHATD_BASE_URL: `${stack.t.api.url}/v1`, CHATD_TOKEN: stack.users.alice!.token,
    CHATD_WEBHOOK_BODY: hook.body, CHATD_WEBHOOK_HEADERS: JSON.stringify(hook.headers), CHATD_WEBHOOK_SECRET: secret }, ["webhook"]);
  assert.is(result.code, 0, result.stderr);
  assert.is(result.stdout.trim(), "ok webhook");
});

test.run();
