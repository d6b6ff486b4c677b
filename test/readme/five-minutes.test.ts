// The README's five-minute path, walked on a fresh clone as a newcomer would: `npm start` on the embedded
// PostgreSQL, then every ```sh five-minutes block of the README in order, in a shell in the clone, each compared
// with the ```text five-minutes block that follows it (UUIDs read as <uuid>). Only the port differs: the README's
// 127.0.0.1:8787 becomes a free port. node_modules is linked from this checkout to keep it fast.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { freePort } from "../../src/db/embedded.ts";
import { launch } from "../support/chatd-process.ts";

interface Step { script: string; expected: string | undefined }

/** The tagged blocks of the README's five-minute section, each shell block with the output block after it. */
function fiveMinuteSteps(readme: string): Step[] {
  const blocks = [...readme.matchAll(/^```(sh|text) five-minutes\n([\s\S]*?)^```$/gm)].map((m) => ({ kind: m[1]!, body: m[2]! }));
  const steps: Step[] = [];
  for (const block of blocks) {
    if (block.kind === "sh") steps.push({ script: block.body, expected: undefined });
    else if (steps.length > 0) steps[steps.length - 1]!.expected = block.body.trim();
  }
  return steps;
}

const uuids = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>");

test("the README's five-minute path ends with the succeeded receipt it promises", async () => {
  const clone = mkdtempSync(join(tmpdir(), "chatd-readme-"));
  // The embedded PostgreSQL runs as the postgres OS user under root, and must be able to reach the clone's .chatd.
  chmodSync(clone, 0o755);
  execFileSync("git", ["clone", "--quiet", projectRoot, clone]);
  symlinkSync(join(projectRoot, "node_modules"), join(clone, "node_modules"));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("npm_") && !key.startsWith("CHATD_") && !["DATABASE_URL", "INIT_CWD", "PORT"].includes(key)) env[key] = value;
  }
  const port = await freePort();
  const chatd = launch("npm", ["start"], { cwd: clone, env: { ...env, PORT: String(port), CHATD_METRICS_PORT: "0", CHATD_LOG_FORMAT: "json" } });
  try {
    await chatd.waitFor("chatd is running", (line) => line.msg === "chatd is running");
    const steps = fiveMinuteSteps(readFileSync(join(clone, "README.md"), "utf8"));
    assert.ok(steps.length >= 3, "the README has the tagged steps");
    assert.ok(steps.at(-1)!.expected?.includes('"status":"SUCCEEDED"'), "the path ends with a succeeded receipt");
    const variables = [...new Set(steps.flatMap((s) => [...s.script.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]!)))];
    for (const [index, step] of steps.entries()) {
      const script = [
        "set -euo pipefail",
        "[ -f .five-minutes-env ] && . ./.five-minutes-env",
        step.script.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`),
        variables.length > 0 ? `declare -p ${variables.join(" ")} > .five-minutes-env 2>/dev/null || true` : "",
      ].join("\n");
      const run = () => {
        const r = spawnSync("bash", ["-c", script], { cwd: clone, env, encoding: "utf8" });
        assert.is(r.status, 0, `step ${index + 1} failed:\n${step.script}\n${r.stderr}`);
        return uuids(r.stdout.trim());
      };
      let out = run();
      // The receipt step says to run it again while the request is pending: the test does once the worker has
      // logged the path's one turn as finished (its receipt is committed before that line).
      if (out.includes('"status":"PENDING"')) {
        await chatd.waitFor("the worker's \"turn finished\"", (line) => line.msg === "turn finished");
        out = run();
      }
      if (step.expected !== undefined) assert.is(out, step.expected, `step ${index + 1}'s output is the README's`);
    }
    chatd.child.kill("SIGTERM");
    assert.equal(await chatd.exited, { code: 0, signal: null }, "Ctrl-C's equivalent stops it cleanly");
  } finally {
    chatd.child.kill("SIGKILL");
    rmSync(clone, { recursive: true, force: true });
  }
});

test.run();
