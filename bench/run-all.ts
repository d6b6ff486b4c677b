// `npm run bench`: every benchmark in turn (validator, end-to-end structured turns, batch drain, slow turns in
// flight, migrate), each in its own process so one's memory and GC state do not colour the next.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../src/db/database.ts";

const runs: [string, string[]][] = [
  ["bench:validator", ["--expose-gc", join(projectRoot, "bench", "validator.ts")]],
  ["bench:e2e", [join(projectRoot, "bench", "e2e.ts")]],
  ["bench:batch", [join(projectRoot, "bench", "batch.ts"), "1000"]],
  ["bench:inflight", [join(projectRoot, "bench", "inflight.ts")]],
  ["bench:migrate", [join(projectRoot, "bench", "migrate.ts")]],
];
let failed = 0;
for (const [name, args] of runs) {
  console.log(`\n== ${name}`);
  const result = spawnSync(process.execPath, args, { stdio: "inherit" });
  if (result.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
