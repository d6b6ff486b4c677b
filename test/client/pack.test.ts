// The package as a user installs it: `npm pack` the client, install the tarball into a new app outside the
// repository (only the tarball's declared dependencies come with it), and run an example there on Node 22 against a
// live stack. Files under node_modules are not type-stripped by Node, so this fails if the package ships TypeScript.
import { execFile, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { projectRoot } from "../../src/db/database.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

const exec = promisify(execFile);
let stack: LiveStack;
let app: string;

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  app = mkdtempSync(join(tmpdir(), "chatd-client-app-"));
});
test.after(async () => {
  await stack.close();
  rmSync(app, { recursive: true, force: true });
});

test("the packed client installs alone into a new app and runs an example on Node 22", async () => {
  assert.ok(!app.startsWith(projectRoot), "the app is outside the repository");
  const { stdout } = await exec("npm", ["pack", "--json", "--pack-destination", app], { cwd: join(projectRoot, "client") });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  const files = packed!.files.map((file) => file.path);
  assert.ok(files.includes("dist/index.js") && files.includes("dist/index.d.ts") && files.includes("dist/ai-sdk/index.js"), files.join(" "));
  assert.equal(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts")), [], "no TypeScript sources are shipped");

  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "an-app", private: true, type: "module",
    dependencies: { "@chatd/client": `file:./${packed!.filename}` } }));
  await exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: app });
  const installed = readdirSync(join(app, "node_modules"));
  for (const server of ["pg", "postgraphile", "graphile-worker", "ai", "zod", "typescript"]) {
    assert.not.ok(installed.includes(server), `${server} is not a dependency of the client`);
  }
  assert.ok(existsSync(join(app, "node_modules", "@chatd", "client", "dist", "index.js")));

  copyFileSync(join(projectRoot, "examples", "structured-request.ts"), join(app, "structured-request.ts"));
  const { stdout: version } = await exec(process.execPath, ["--version"]);
  assert.match(version, /^v22\./, "the example runs on Node 22");
  const result = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, ["structured-request.ts"], {
      cwd: app, env: { ...process.env, CHATD_URL: stack.t.api.graphqlUrl, CHATD_TOKEN: stack.users.alice!.token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on("data", (chunk: Buffer) => { err += chunk.toString(); });
    child.on("close", (code) => resolve({ code, out, err }));
  });
  assert.is(result.code, 0, result.err);
  assert.match(result.out, "invoice: 12345678901234567890123 (bigint)");

  // The AI SDK entry point loads without the `ai` package (it is an optional peer).
  const { stdout: exported } = await exec(process.execPath, ["-e", "import('@chatd/client/ai-sdk').then((m) => console.log(typeof m.createChatd))"], { cwd: app });
  assert.is(exported.trim(), "function");
});

test.run();
