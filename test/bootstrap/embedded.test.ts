// The embedded PostgreSQL of the README's commands: a cluster another live chatd runs is shared, not stopped; one
// orphaned by a chatd killed with SIGKILL is adopted (and stopped when its new owner is done); afterwards a fresh
// start works. Real processes and a real cluster in a throw-away folder of the project.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import { projectRoot } from "../../src/db/database.ts";
import { startEmbedded } from "../../src/db/embedded.ts";

const dataDir = join(projectRoot, ".chatd", `test-embedded-${process.pid}`);

test.after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

test("a running cluster is shared with its live owner, adopted after the owner is killed, then stopped", async () => {
  const holder = spawn(process.execPath, [join(projectRoot, "test", "support", "embedded-holder.ts"), dataDir],
    { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => holder.on("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    holder.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    holder.on("exit", () => reject(new Error("the holder exited before its cluster was ready")));
  });

  const shared = await startEmbedded({ dataDir });
  assert.is(shared.port, port, "the second process uses the running cluster instead of starting another");
  await shared.stop();
  assert.ok(await canQuery(shared.url), "stopping a shared cluster leaves it running for its owner");

  holder.kill("SIGKILL");
  await exited;
  assert.ok(await canQuery(shared.url), "the orphan still serves after its owner was killed");
  const adopted = await startEmbedded({ dataDir });
  assert.is(adopted.port, port, "the orphan is adopted, not replaced");
  await adopted.stop();
  assert.not.ok(await canQuery(adopted.url), "the adopter stops the orphan when it is done");

  const fresh = await startEmbedded({ dataDir });
  try {
    assert.ok(await canQuery(fresh.url), "a fresh start works on the same folder");
  } finally {
    await fresh.stop();
  }
});

test.run();
