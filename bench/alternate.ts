// `npm run bench:alternate -- <baseline checkout> [e2e|inflight|leases] [rounds] [bench arguments...]`: runs a benchmark
// alternately in another checkout (say a `git worktree add` of the previous main, with this tree's bench/ copied
// in if it lacks the figures) and in this one, so that both see the same machine load, and prints each run's table
// under its label. Each run migrates its own database with its own checkout's migrations and sql/.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { projectRoot } from "../src/db/database.ts";

const [baseline, bench = "e2e", rounds = "2", ...args] = process.argv.slice(2);
if (baseline == null || !existsSync(join(baseline, "bench", `${bench}.ts`))) {
  console.error("usage: npm run bench:alternate -- <baseline checkout> [e2e|inflight|leases] [rounds] [bench arguments...]");
  process.exit(2);
}
for (let round = 1; round <= Number(rounds); round += 1) {
  for (const [label, dir] of [["baseline", resolve(baseline)], ["this tree", projectRoot]] as const) {
    const run = spawnSync(process.execPath, [join(dir, "bench", `${bench}.ts`), ...args], { cwd: dir, encoding: "utf8" });
    console.log(`── round ${round}, ${label} (${dir}), exit ${String(run.status)}`);
    console.log(run.stdout.trimEnd());
    if (run.status !== 0) console.log(run.stderr.trimEnd());
  }
}
