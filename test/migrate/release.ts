// The database of the previous release, built the way that release's `chatd migrate` built it: its migrations
// through node-pg-migrate, Graphile Worker's schema, then all of its sql/ files in one transaction with their
// checksums recorded. The files are test/fixtures/release-5823e57 (`git archive 5823e57 migrations sql`; two
// comment lines reworded), so that a clone without history can run the upgrade test.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";
import { projectRoot } from "../../src/db/database.ts";

export const RELEASE = "5823e57";
const releaseDir = join(projectRoot, "test", "fixtures", `release-${RELEASE}`);

export async function installRelease(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("set client_min_messages = warning");
    await client.query("create schema if not exists chatd_meta");
    await runner({
      dbClient: client, dir: join(releaseDir, "migrations"), migrationsTable: "pgmigrations", migrationsSchema: "chatd_meta",
      direction: "up", count: Infinity, checkOrder: true, singleTransaction: true, noLock: true, log: () => {},
    });
    await runWorkerMigrations({ connectionString: databaseUrl, logger: new Logger(() => () => {}) });
    const dir = join(releaseDir, "sql");
    const files = readdirSync(dir).filter((name) => name.endsWith(".sql")).sort()
      .map((name) => ({ name, text: readFileSync(join(dir, name), "utf8") }));
    await client.query(`create table chatd_meta.repeatable_sql (
      name text primary key, sha256 text not null, applied_at timestamptz not null default now())`);
    await client.query("begin");
    for (const file of files) await client.query(file.text);
    for (const file of files) {
      await client.query("insert into chatd_meta.repeatable_sql (name, sha256) values ($1, $2)",
        [file.name, createHash("sha256").update(file.text).digest("hex")]);
    }
    await client.query("commit");
  } finally {
    await client.end();
  }
}
