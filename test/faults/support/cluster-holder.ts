// A test process that creates a private cluster and holds it until killed: test/faults/cluster-reaper.test.ts kills
// it with SIGKILL, as the test runner does a file that overruns its time.
import { createCluster } from "./cluster.ts";

const cluster = await createCluster();
process.stdout.write(`ready ${cluster.root}\n`);
setInterval(() => {}, 60_000);
