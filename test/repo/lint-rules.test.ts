// The repository's shape rules in eslint.config.js fail on a planted violation: a file over 400 lines, an import
// cycle, a module importing from a layer above its own. Planted files live in a folder of their own under test/repo
// for the length of one test (no-cycle reads the files it follows from disk) and are removed after it.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ESLint } from "eslint";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

const eslint = new ESLint({ cwd: projectRoot });

/** The rule ids eslint reports for `code` as if it were the file at `path` (relative to the repository). */
async function ruleIds(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(projectRoot, path) });
  return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

test("a file over 400 lines fails max-lines; 400 lines pass; the JSON boundary has no allowance left", async () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n";
  assert.equal(await ruleIds("src/tools/planted.ts", lines(400)), []);
  const over = await ruleIds("src/tools/planted.ts", lines(401));
  assert.equal(over.length, 1);
  assert.match(over[0]!, /^max-lines: File has too many lines \(401\)\. Maximum allowed is 400\./);
  assert.match((await ruleIds("src/structured/json-boundary.ts", lines(401)))[0]!, /^max-lines: .*Maximum allowed is 400\./);
});

test("a module importing from a layer above its own fails no-restricted-paths; downwards passes", async () => {
  const up = await ruleIds("src/structured/planted.ts", 'import { startWorker } from "../../worker/index.ts";\nexport const w = startWorker;\n');
  assert.equal(up.length, 1);
  assert.match(up[0]!, /^import-x\/no-restricted-paths: .*src\/structured sits below .*worker/);
  assert.equal(await ruleIds("src/providers/planted.ts", 'import { parseJsonSafe } from "../structured/index.ts";\nexport const p = parseJsonSafe;\n'), []);
  const workerToCli = await ruleIds("worker/planted.ts", 'import { exitOnSignal } from "../src/cli/lifecycle.ts";\nexport const l = exitOnSignal;\n');
  assert.match(workerToCli.join("\n"), /import-x\/no-restricted-paths: .*worker sits below src\/api, src\/cli/);
});

test("an import cycle fails no-cycle", async () => {
  const dir = join(projectRoot, "test", "repo", `planted-${randomBytes(4).toString("hex")}`);
  mkdirSync(dir);
  try {
    writeFileSync(join(dir, "a.ts"), 'import { b } from "./b.ts";\nexport const a = () => b();\n');
    writeFileSync(join(dir, "b.ts"), 'import { a } from "./a.ts";\nexport const b = (): unknown => a;\n');
    const found = await ruleIds(relative(projectRoot, join(dir, "a.ts")), 'import { b } from "./b.ts";\nexport const a = () => b();\n');
    assert.equal(found.length, 1);
    assert.match(found[0]!, /^import-x\/no-cycle: Dependency cycle detected/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
