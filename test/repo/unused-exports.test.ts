// No export that nothing imports (CONTRIBUTING: no dead code): knip, configured in knip.jsonc, on the repository,
// and on a planted project of two files in a temporary folder to show that the check fails.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";

interface Finding { file: string; exports: { name: string }[] }

/** knip's unused exports in `directory`, as `file: name` lines. */
function unusedExports(directory: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(join(projectRoot, "node_modules", ".bin", "knip"), ["--directory", directory, "--include", "exports,nsExports", "--reporter", "json", "--no-progress"],
      { cwd: directory, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        try {
          const { issues } = JSON.parse(stdout) as { issues: Finding[] };
          resolve(issues.flatMap((issue) => issue.exports.map((found) => `${issue.file}: ${found.name}`)));
        } catch {
          reject(new Error(`knip did not report (${error?.message ?? "no error"}): ${stderr}${stdout}`));
        }
      });
  });
}

test("a planted export that nothing imports is found", async () => {
  const dir = await mkdtemp(join(tmpdir(), "chatd-knip-"));
  try {
    await mkdir(join(dir, "src"));
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "planted", type: "module", private: true }));
    await writeFile(join(dir, "knip.json"), JSON.stringify({ entry: ["src/main.ts"], project: ["src/**/*.ts"] }));
    await writeFile(join(dir, "src", "main.ts"), 'import { used } from "./lib.ts";\nconsole.log(used);\n');
    await writeFile(join(dir, "src", "lib.ts"), "export const used = 1;\nexport const unused = 2;\n");
    assert.equal(await unusedExports(dir), ["src/lib.ts: unused"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("every export of the repository is imported somewhere (knip.jsonc)", async () => {
  assert.equal(await unusedExports(projectRoot), []);
});

test.run();
