// /metrics on the worker (src/metrics.ts) and `chatd ops status` (src/cli/ops-command.ts): the counters and
// gauges named in the operator docs exist and move during a batch run (scripted provider, not a real model).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createUser, setStructuredExperiment } from "../support/chats.ts";
import { fastSettings, makeWorkspaces, startTestWorker, waitFor } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { formatSummary, readSummary } from "../../src/cli/ops-command.ts";
import { batch, createBatch, lines } from "../batch/helpers.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  user = await createUser(db, "metrics");
  worker = await startTestWorker(db, await makeWorkspaces(), { metricsPort: 0, concurrency: 4 });
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

async function scrape(): Promise<string> {
  const response = await fetch(worker.metricsUrl!);
  assert.is(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
  return response.text();
}

/** Sum of a metric's samples whose labels contain `labels` (e.g. 'status="succeeded"'). */
function sum(text: string, name: string, labels = ""): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels !== "" && !line.includes(labels)) continue;
    total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

test("/metrics exposes receipts, turns, provider latency, queue depth, recoveries and batch progress, and they move", async () => {
  const before = await scrape();
  for (const name of ["chatd_receipts", "chatd_turns", "chatd_queue_depth", "chatd_lease_recoveries", "chatd_batches",
    "chatd_batch_items", "chatd_provider_step_seconds", "chatd_provider_errors_total", "chatd_structured_validation_seconds",
    "chatd_worker_runs_total", "chatd_stuck_chats", "chatd_process_resident_memory_bytes"]) {
    assert.ok(before.includes(`# TYPE ${name} `), `${name} is exposed`);
  }
  const b = await createBatch(db, user, lines(20), { concurrency: 4 });
  const during = await waitFor("items running", async () => {
    const text = await scrape();
    return sum(text, "chatd_batch_items", 'status="running"') > 0 ? text : undefined;
  });
  assert.ok(sum(during, "chatd_batches", 'status="running"') >= 1);
  await waitFor("the batch", async () => (await batch(db, b.id)).finished_at != null || undefined);
  // A runner counts its pass once the commit that finished its item returned, a moment after the batch row shows
  // the last item done: the scrape is awaited until the passes are all counted.
  const after = await waitFor("every item's runner pass counted", async () => {
    const text = await scrape();
    return sum(text, "chatd_worker_runs_total") >= 20 ? text : undefined;
  });
  assert.is(sum(after, "chatd_receipts") - sum(before, "chatd_receipts"), 20);
  assert.ok(sum(after, "chatd_turns", 'state="finished"') >= 20);
  assert.ok(sum(after, "chatd_provider_step_seconds_count") > sum(before, "chatd_provider_step_seconds_count"));
  assert.ok(sum(after, "chatd_structured_validation_seconds_count") > sum(before, "chatd_structured_validation_seconds_count"));
  assert.is(sum(after, "chatd_batches", 'status="completed"'), 1);
  const notFound = await fetch(worker.metricsUrl!.replace("/metrics", "/other"));
  assert.is(notFound.status, 404);
});

test("chatd ops status summarises the views on one screen", async () => {
  const summary = await readSummary(db.pool as never);
  const text = formatSummary(summary);
  for (const heading of ["== workers", "== stuck chats (chat_private.stuck_chats): 0", "== structured requests, last 24 h",
    "== recent failures", "== queues", "== active batches"]) {
    assert.ok(text.includes(heading), heading);
  }
  assert.ok(text.split("\n").length < 60, "fits one screen");
  assert.ok(summary.outcomes.reduce((n, o) => n + o.n, 0) >= 20);
});

test.run();
