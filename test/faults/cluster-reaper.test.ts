// A private cluster does not outlive its test: when the test process dies without cleaning up (SIGKILL, as the
// runner kills a file that overruns its time), the cluster's reaper stops the postmaster and removes the folder.
// Before the reaper, both were left behind (a postmaster of the postgres user on its own port, and the folder).
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { processAlive } from "../../src/process-alive.ts";
import { waitFor } from "../support/wait.ts";

test("a SIGKILLed test process leaves no postmaster and no folder behind", async () => {
  const holder = spawn(process.execPath, [join(import.meta.dirname, "support", "cluster-holder.ts")],
    { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => holder.on("exit", () => resolve()));
  let output = "";
  holder.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    const root = await waitFor("the cluster", async () => /ready (\S+)\n/.exec(output)?.[1], 60_000);
    const postmaster = Number(readFileSync(join(root, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    assert.ok(processAlive(postmaster), "the cluster runs");
    holder.kill("SIGKILL");
    await exited;
    await waitFor("the postmaster to end and the folder to go", async () => !processAlive(postmaster) && !existsSync(root));
  } finally {
    holder.kill("SIGKILL");
  }
});

test.run();
