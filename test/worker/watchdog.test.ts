// The deadlines of one provider attempt (worker/loop/watchdog.ts) on real timers: stream events keep pushing the idle
// deadline on but never the step's; silence ends the attempt at the idle deadline; the run's abort reaches the
// attempt with its reason; a stopped watchdog fires nothing and no longer follows the run's signal (the attempt is
// over: its listener on the run's signal goes with it). Margins are
// wide (events every 20 ms against a 400 ms idle deadline) so that a loaded machine does not fire what should not.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RuntimeSettings } from "../../worker/loop/config.ts";
import { StepWatchdog } from "../../worker/loop/watchdog.ts";
import type { StepResult } from "../../src/providers/index.ts";

function settings(idleMs: number, stepMs: number): RuntimeSettings {
  return { leaseSeconds: 30, maxStepsPerTurn: 10, retryMaxAttempts: 1, retryInitialDelayMs: 0, retryMaxDelayMs: 0, finalizerRepairs: 2,
    streamIdleTimeoutMs: idleMs, stepTimeoutMs: stepMs, toolCallTimeoutMs: 1000, progressTimeoutMs: 1000 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const aborted = (signal: AbortSignal) => new Promise<unknown>((resolve) =>
  signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

const RESULT: StepResult = { provider: "scripted", model: "m", parts: [], finish: "interrupted", pauseTurn: false,
  usage: {}, warnings: [], toolSchemaRewrites: [] };

test("events keep the attempt alive past the idle deadline, until the step deadline ends it", async () => {
  const run = new AbortController();
  const watchdog = new StepWatchdog(settings(400, 1500), run.signal);
  const events = setInterval(() => watchdog.touch(), 20);
  try {
    const reason = await aborted(watchdog.signal);
    assert.is(reason, "step_timeout");
    assert.is(watchdog.fired, "step_timeout");
    const judged = watchdog.judge(RESULT, run.signal);
    assert.is(judged.finish, "error");
    assert.equal(judged.error, { retryable: true, kind: "step_timeout", message: "provider error: step_timeout" });
  } finally {
    clearInterval(events);
    watchdog.stop();
  }
});

test("silence after an event ends the attempt at the idle deadline", async () => {
  const run = new AbortController();
  const watchdog = new StepWatchdog(settings(400, 60_000), run.signal);
  const started = performance.now();
  await sleep(200);
  watchdog.touch();
  const touched = performance.now();
  try {
    assert.is(await aborted(watchdog.signal), "stream_idle_timeout");
    assert.ok(performance.now() - touched >= 399, "not before the idle deadline counted from the last event");
    assert.ok(performance.now() - started >= 599);
    assert.is(watchdog.fired, "stream_idle_timeout");
  } finally {
    watchdog.stop();
  }
});

test("the run's abort reaches the attempt with its reason, and the result stays the run's", async () => {
  const run = new AbortController();
  const watchdog = new StepWatchdog(settings(60_000, 60_000), run.signal);
  run.abort("interrupt");
  assert.ok(watchdog.signal.aborted);
  assert.is(watchdog.signal.reason, "interrupt");
  assert.is(watchdog.fired, undefined);
  assert.is(watchdog.judge(RESULT, run.signal), RESULT);
  watchdog.stop();
  const before = new AbortController();
  before.abort("shutdown");
  const late = new StepWatchdog(settings(60_000, 60_000), before.signal);
  assert.is(late.signal.reason, "shutdown", "a run already stopped gives an attempt already aborted");
  late.stop();
});

test("a stopped watchdog fires nothing and no longer follows the run's signal", async () => {
  const run = new AbortController();
  const watchdog = new StepWatchdog(settings(50, 100), run.signal);
  watchdog.stop();
  await sleep(250);
  run.abort("interrupt");
  assert.is(watchdog.signal.aborted, false);
  assert.is(watchdog.fired, undefined);
});

test.run();
