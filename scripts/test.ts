// `npm test`: every test file against a real PostgreSQL (DATABASE_URL, else an embedded one), with the type-check
// and lint running beside them. A template database is migrated once; each test file clones it (test/support/db.ts)
// and runs in a node process of its own, CHATD_TEST_JOBS of them at once (default: one more than the cores, 2 to 4;
// the files mostly wait on PostgreSQL and on child processes). A file whose first lines say
// `// test-runner: serial` runs alone, after the others. Files start longest first, by the times of the previous
// run (.chatd/test-times.json, else scripts/test-times.json). Each file's output is printed in one block when it
// ends, with its wall time; the slowest files are listed before the last line, `N passed, N failed`, which CI
// reads. uvu prints no failed count, so failures are Total - Passed.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";
import pg from "pg";
import { API_ROLE } from "../src/api/api-role.ts";
import { resolveJwtSecret } from "../src/api/auth.ts";
import { ensureDatabase, projectRoot, withDatabase } from "../src/db/database.ts";
import { startEmbedded, type EmbeddedServer } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";
import { fileOutcome, parseJobs, planOrder } from "./test-plan.ts";

const bin = (name: string) => join(projectRoot, "node_modules", ".bin", name);
const testRoot = join(projectRoot, "test");
// Each file's wall time in seconds from the last run here; a fresh clone (CI) orders by the committed times of a
// measured run instead (scripts/test-times.json: only their order matters, so they need no refresh per machine).
const timesFile = join(projectRoot, ".chatd", "test-times.json");
const seedTimesFile = join(projectRoot, "scripts", "test-times.json");
// A file still running after this long is killed and counted as failed: a hang must not stall CI.
const fileTimeoutMs = Number(process.env.CHATD_TEST_FILE_TIMEOUT_S ?? 900) * 1000;

interface Run { code: number; out: string }

/** A command whose output is kept and printed in one block when it ends (it runs beside the test files). */
function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}

const running = new Set<number>();

/** One test file in a process group of its own (killed whole on timeout or interrupt), output buffered. */
function runFile(file: string, env: NodeJS.ProcessEnv): Promise<Run & { ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(testRoot, file)], { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const pid = child.pid!;
    running.add(pid);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => {
      out += `\n!! ${file} still running after ${fileTimeoutMs / 1000} s (CHATD_TEST_FILE_TIMEOUT_S): killed\n`;
      killGroup(pid);
    }, fileTimeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(pid);
      // What the file left running (a server, a worker) goes with it.
      killGroup(pid);
      resolve({ code: code ?? (signal ? 1 : 0), out, ms: performance.now() - started });
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is gone already
  }
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" || entry.name === "node_modules" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(testRoot, path)] : [];
  });
}

function isSerial(file: string): boolean {
  const head = readFileSync(join(testRoot, file), "utf8").split("\n", 30);
  return head.some((line) => /^\/\/ test-runner: serial\b/.test(line));
}

function previousTimes(): Record<string, number> {
  for (const file of [timesFile, seedTimesFile]) {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
    } catch {
      // not there (a fresh clone has no .chatd/), or unreadable: the next source
    }
  }
  return {};
}

let passed = 0;
let failed = 0;
const filter = process.argv[2];
const suiteStarted = performance.now();

// Type-check and lint run beside the test files (they use the CPU while the files mostly wait), one after the
// other, each counted as one test.
const checks = filter ? Promise.resolve() : (async () => {
  const tsc = await run(bin("tsc"), ["--noEmit", "-p", "."]);
  // The web console has its own settings (DOM, JSX): console/tsconfig.json.
  const consoleTsc = await run(bin("tsc"), ["--noEmit", "-p", "console"]);
  const typed = tsc.code === 0 && consoleTsc.code === 0;
  process.stdout.write(`\n== type-check (tsc --noEmit, strict) ${typed ? "ok" : "FAILED"}\n${tsc.out}${consoleTsc.out}`);
  if (typed) passed += 1;
  else failed += 1;
  const lint = await run(bin("eslint"), ["."]);
  process.stdout.write(`\n== lint (eslint) ${lint.code === 0 ? "ok" : "FAILED"}\n${lint.out}`);
  if (lint.code === 0) passed += 1;
  else failed += 1;
})();

let embedded: EmbeddedServer | undefined;
// The embedded server runs in a session of its own (src/db/embedded.ts): an interrupted run stops it here, and
// the test files' process groups with it.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const pid of running) killGroup(pid);
    void (embedded?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}
let adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  console.log("== DATABASE_URL is not set: starting an embedded PostgreSQL for the tests");
  embedded = await startEmbedded({ dataDir: join(projectRoot, ".chatd", "test-postgres"), ephemeral: true });
  adminUrl = embedded.url;
}
const template = `chatd_test_template_${process.pid}`;
const times: Record<string, number> = {};
try {
  await ensureDatabase(adminUrl, template);
  await migrate(withDatabase(adminUrl, template));
  // chatd_api is one role for the whole cluster: its password is set here, once, and every file (and every chatd a
  // file starts on the cluster) uses it; two sessions altering the role at once fail ("tuple concurrently updated").
  const apiPassword = "chatd-api-test-password";
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`alter role ${API_ROLE} with login password ${pg.escapeLiteral(apiPassword)}`).finally(() => admin.end());
  const pattern = new RegExp(filter ?? "\\.test\\.ts$");
  const files = testFiles(testRoot).filter((file) => pattern.test(file));
  const { parallel, serial } = planOrder(files, isSerial, previousTimes(), (file) => statSync(join(testRoot, file)).size);
  const jobs = parseJobs(process.env.CHATD_TEST_JOBS, availableParallelism());
  console.log(`== tests (uvu): ${files.length} files, ${parallel.length} of them ${jobs} at a time, then ${serial.length} alone`);
  // The development secret in .chatd/ is created once here, not by two files racing to create it.
  resolveJwtSecret();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHATD_TEST_ADMIN_URL: adminUrl,
    CHATD_TEST_TEMPLATE: template,
    CHATD_API_PASSWORD: apiPassword,
  };
  const record = (file: string, result: Run & { ms: number }) => {
    times[file] = Math.round(result.ms / 100) / 10;
    const outcome = fileOutcome(result.code, result.out);
    passed += outcome.passed;
    failed += outcome.failed;
    const status = outcome.failed > 0 ? "FAILED" : "ok";
    process.stdout.write(`\n== ${file} ${status} (${(result.ms / 1000).toFixed(1)} s)\n${result.out.trimEnd()}\n`);
  };
  const queue = [...parallel];
  await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) record(file, await runFile(file, env));
  }));
  for (const file of serial) record(file, await runFile(file, env));
  await checks;
} finally {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>(
    "select datname from pg_database where datname like $1", [`chatd_t%_${process.pid}%`]);
  for (const { datname } of rows) await admin.query(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  await admin.end();
  await embedded?.stop();
}
if (!filter) {
  mkdirSync(join(projectRoot, ".chatd"), { recursive: true });
  writeFileSync(timesFile, JSON.stringify(times, null, 1));
} else if (existsSync(timesFile)) {
  writeFileSync(timesFile, JSON.stringify({ ...previousTimes(), ...times }, null, 1));
}
const slowest = Object.entries(times).sort((a, b) => b[1] - a[1]).slice(0, 10);
console.log(`\n== slowest files\n${slowest.map(([file, s]) => `${s.toFixed(1).padStart(7)} s  ${file}`).join("\n")}`);
console.log(`== wall time ${((performance.now() - suiteStarted) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
