// The test runner's decisions, apart from its processes so that test/repo/test-runner.test.ts can check them.

/** CHATD_TEST_JOBS, else one more than the cores (at least 2, at most 4): the files mostly wait. */
export function parseJobs(setting: string | undefined, cores: number): number {
  if (setting !== undefined && setting !== "") {
    const jobs = Number(setting);
    if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`CHATD_TEST_JOBS must be a whole number of at least 1, not ${JSON.stringify(setting)}`);
    return jobs;
  }
  return Math.min(4, Math.max(2, cores + 1));
}

/**
 * Which files share the pool and which run alone, longest first: by the previous run's time, else (a new
 * file, a fresh clone) by size, placed before every file with a known time so that an unknown long file is not
 * the last to start.
 */
export function planOrder(files: string[], serial: (file: string) => boolean, previous: Record<string, number>,
  size: (file: string) => number): { parallel: string[]; serial: string[] } {
  const key = (file: string): [number, number] => file in previous ? [0, previous[file]!] : [1, size(file)];
  const ordered = [...files].sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    return kb[0] - ka[0] || kb[1] - ka[1] || a.localeCompare(b);
  });
  return { parallel: ordered.filter((file) => !serial(file)), serial: ordered.filter(serial) };
}

/** A file's counts from uvu's summary; a file that printed none, or exited non-zero with all passed, is one failure. */
export function fileOutcome(code: number, out: string): { passed: number; failed: number } {
  const count = (label: string) => Number(out.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m"))?.[1] ?? NaN);
  const total = count("Total");
  const ok = count("Passed");
  if (Number.isNaN(total) || Number.isNaN(ok)) return { passed: 0, failed: 1 };
  return { passed: ok, failed: total - ok + (code !== 0 && total === ok ? 1 : 0) };
}
