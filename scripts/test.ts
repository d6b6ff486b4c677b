// `npm test`: type-check, lint, then every test file against a real PostgreSQL (DATABASE_URL, else an embedded
// one). A template database is migrated once; each test file clones it (test/support/db.ts). Ends with the line
// `N passed, N failed` that CI reads; uvu prints no failed count, so failures are Total - Passed.
import { spawn } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { ensureDatabase, projectRoot, withDatabase } from "../src/db/database.ts";
import { startEmbedded, type EmbeddedServer } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";

const bin = (name: string) => join(projectRoot, "node_modules", ".bin", name);

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}

let passed = 0;
let failed = 0;
const filter = process.argv[2];

if (!filter) {
  console.log("== type-check (tsc --noEmit, strict)");
  const tsc = await run(bin("tsc"), ["--noEmit", "-p", "."]);
  // The web console has its own settings (DOM, JSX): console/tsconfig.json.
  const consoleTsc = await run(bin("tsc"), ["--noEmit", "-p", "console"]);
  if (tsc.code === 0 && consoleTsc.code === 0) passed += 1;
  else failed += 1;
  console.log("== lint (eslint)");
  const lint = await run(bin("eslint"), ["."]);
  if (lint.code === 0) passed += 1;
  else failed += 1;
}

let embedded: EmbeddedServer | undefined;
// The embedded server runs in a session of its own (src/db/embedded.ts): an interrupted run stops it here.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void (embedded?.stop() ?? Promise.resolve()).finally(() => process.exit(130)));
}
let adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  console.log("== DATABASE_URL is not set: starting an embedded PostgreSQL for the tests");
  embedded = await startEmbedded({ dataDir: join(projectRoot, ".chatd", "test-postgres"), ephemeral: true });
  adminUrl = embedded.url;
}
const template = `chatd_test_template_${process.pid}`;
try {
  await ensureDatabase(adminUrl, template);
  await migrate(withDatabase(adminUrl, template));
  console.log("== tests (uvu)");
  const uvu = await run(process.execPath, [join(projectRoot, "node_modules", "uvu", "bin.js"), "test", filter ?? "\\.test\\.ts$", "--color=false"], {
    ...process.env,
    CHATD_TEST_ADMIN_URL: adminUrl,
    CHATD_TEST_TEMPLATE: template,
  });
  const count = (label: string) => Number(uvu.out.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "m"))?.[1] ?? NaN);
  const total = count("Total");
  const ok = count("Passed");
  if (Number.isNaN(total) || Number.isNaN(ok)) {
    failed += 1;
  } else {
    passed += ok;
    failed += total - ok;
    if (uvu.code !== 0 && total === ok) failed += 1;
  }
} finally {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>(
    "select datname from pg_database where datname like $1", [`chatd_t%_${process.pid}%`]);
  for (const { datname } of rows) await admin.query(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  await admin.end();
  await embedded?.stop();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
