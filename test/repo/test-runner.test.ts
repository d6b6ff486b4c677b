// The test runner's decisions (scripts/test-plan.ts): how many files run at once, in which order, which run alone,
// and how a file's uvu summary and exit code become the `N passed, N failed` that CI reads.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fileOutcome, parseJobs, planOrder } from "../../scripts/test-plan.ts";

test("CHATD_TEST_JOBS sets the number of files at once; unset, one more than the cores, within 2..4", () => {
  assert.is(parseJobs("1", 2), 1);
  assert.is(parseJobs("6", 2), 6);
  assert.is(parseJobs(undefined, 1), 2);
  assert.is(parseJobs(undefined, 2), 3);
  assert.is(parseJobs("", 16), 4);
  for (const bad of ["0", "-1", "1.5", "two"]) assert.throws(() => parseJobs(bad, 2), /CHATD_TEST_JOBS must be a whole number/);
});

test("files start longest first by the previous run; unknown files first by size; serial files apart", () => {
  const sizes: Record<string, number> = { "a.test.ts": 10, "b.test.ts": 500, "c.test.ts": 20, "d.test.ts": 1, "e.test.ts": 7 };
  const plan = planOrder(Object.keys(sizes), (file) => file === "c.test.ts" || file === "e.test.ts",
    { "a.test.ts": 90_000, "c.test.ts": 5, "d.test.ts": 120_000 }, (file) => sizes[file]!);
  assert.equal(plan, { parallel: ["b.test.ts", "d.test.ts", "a.test.ts"], serial: ["e.test.ts", "c.test.ts"] });
});

test("a file's outcome: uvu's counts; a crash before the summary or a non-zero exit with all passed is a failure", () => {
  const summary = (total: number, passed: number) => `  Total:     ${total}\n  Passed:    ${passed}\n  Skipped:   0\n  Duration:  1.00ms\n`;
  assert.equal(fileOutcome(0, summary(5, 5)), { passed: 5, failed: 0 });
  assert.equal(fileOutcome(1, summary(5, 3)), { passed: 3, failed: 2 });
  assert.equal(fileOutcome(1, summary(5, 5)), { passed: 5, failed: 1 }, "an after hook threw, or the process was killed");
  assert.equal(fileOutcome(1, "Error: cannot find module\n"), { passed: 0, failed: 1 });
});

test.run();
