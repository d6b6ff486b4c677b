// `chatd worker --concurrency 8` starts without Graphile Worker's "maxPoolSize smaller than concurrency" warning:
// its queue pool (2-4 connections) only fetches into the local queue and completes in batches, while chatd's jobs
// run on the task pool, so the advice does not apply and an operator should not be told to act on it.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { launch } from "../support/chatd-process.ts";
import { createTestDatabase } from "../support/db.ts";

test("a worker whose concurrency exceeds its queue pool warns nothing about it", async () => {
  const db = await createTestDatabase();
  const worker = launch(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), "worker", "--concurrency", "8", "--metrics-port", "0"], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: db.url, CHATD_LOG_FORMAT: "json", CHATD_LOG_LEVEL: "info" },
  });
  try {
    await worker.waitFor("worker started", (line) => line.msg === "worker started");
    worker.child.kill("SIGTERM");
    const { code } = await worker.exited;
    assert.is(code, 0, worker.lines.map((line) => line.raw).join("\n"));
    const warnings = worker.lines.filter((line) => (line.level ?? 0) >= 40).map((line) => line.raw);
    assert.equal(warnings.filter((raw) => raw.includes("smaller than concurrency")), [], warnings.join("\n"));
  } finally {
    if (worker.child.exitCode == null) worker.child.kill("SIGKILL");
    await db.drop();
  }
});

test.run();
