// The official `openai` Python SDK (pinned in scripts/openai-python/requirements.txt, installed by .ci/run into
// .chatd/openai-venv) drives a real chatd: responses.parse with a Pydantic model (big int exact), background
// create/retrieve/cancel, chat.completions.parse, and typed errors. scripts/openai-python/sdk_check.py holds the
// checks (outside test/, whose every file the runner imports).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { startLiveStack, type LiveStack } from "./sdk.ts";

const PYTHON = process.env.CHATD_TEST_PYTHON ?? join(projectRoot, ".chatd", "openai-venv", "bin", "python");

let stack: LiveStack;
test.before(async () => {
  stack = await startLiveStack(["alice"]);
});
test.after(() => stack.close());

function runPython(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

test("the Python SDK's parse, background, cancel, chat parse and errors work against chatd", async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/openai-python/env.sh (CI's .ci/run does)`);
  const result = await runPython(join(projectRoot, "scripts", "openai-python", "sdk_check.py"),
    { CHATD_BASE_URL: `${stack.t.api.url}/v1`, CHATD_TOKEN: stack.users.alice!.token });
  assert.is(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim().split("\n"), ["ok parse", "ok background_retrieve_cancel", "ok chat_completions_parse", "ok errors"]);
});

test.run();
