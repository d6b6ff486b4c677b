// The job runner is supervised: when it stops on its own (here: Graphile Worker shutting its pool down on a
// `worker:migrate` notification that announces a breaking queue migration), the worker process exits at once with
// status 70, so that a supervisor starts a new one, instead of living on without running jobs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeWorkspaces } from "../support/worker.ts";
import { RUNNER_LOST_EXIT_CODE } from "../../worker/index.ts";
import { spawnFaultWorker } from "./support/workers.ts";

let db: TestDatabase;
let root: string;

test.before(async () => {
  db = await createTestDatabase();
  root = await makeWorkspaces();
});
test.after(async () => {
  await db.drop();
});

test("a job runner that stops on its own ends the process with status 70", async () => {
  const worker = spawnFaultWorker(db.url, root);
  try {
    await worker.waitForLine(/worker started/);
    // Graphile Worker listens on its LISTEN connection once it has started: wait for that connection.
    await worker.waitForLine(/Worker connected and looking for jobs/);
    await db.pool.query(`select pg_notify('worker:migrate', '{"breaking": true, "migrationNumber": 999}')`);
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("still running"), 20_000));
    assert.is(await Promise.race([worker.exited, timeout]), RUNNER_LOST_EXIT_CODE, worker.describe());
    assert.ok(worker.lines.some((line) => /job runner stopped on its own/.test(line.msg)), "the reason is logged");
  } finally {
    await worker.stop();
  }
});

test.run();
