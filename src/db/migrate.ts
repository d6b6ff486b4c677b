// `chatd migrate`: versioned DDL through node-pg-migrate, then the repeatable `sql/` definitions, all under one
// advisory lock so that several processes starting at once apply everything exactly once.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { runner } from "node-pg-migrate";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";

const projectRoot = join(import.meta.dirname, "..", "..");
const MIGRATIONS_DIR = join(projectRoot, "migrations");
const SQL_DIR = join(projectRoot, "sql");
/** Arbitrary constant shared by every chatd process; distinct from node-pg-migrate's own lock value. */
const MIGRATE_LOCK_KEY = 7_010_420_001;

export interface MigrateResult {
  migrationsApplied: string[];
  /** Repeatable files re-applied because one of them changed (all are re-applied, in order). */
  sqlFilesApplied: string[];
}

interface SqlFile {
  name: string;
  text: string;
  sha256: string;
}

function readSqlFiles(): SqlFile[] {
  return readdirSync(SQL_DIR)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => {
      const text = readFileSync(join(SQL_DIR, name), "utf8");
      return { name, text, sha256: createHash("sha256").update(text).digest("hex") };
    });
}

/**
 * Re-applies every `sql/` file, in name order, when any checksum differs from the recorded one. Applying all of them
 * (rather than only the changed file, as Flyway does) keeps cross-file dependencies simple: each file is written to
 * be re-runnable (`create or replace`, `drop ... if exists`).
 */
async function applyRepeatable(client: pg.ClientBase): Promise<string[]> {
  const files = readSqlFiles();
  await client.query(`create table if not exists chatd_meta.repeatable_sql (
    name text primary key, sha256 text not null, applied_at timestamptz not null default now())`);
  const { rows } = await client.query<{ name: string; sha256: string }>("select name, sha256 from chatd_meta.repeatable_sql");
  const recorded = new Map(rows.map((row) => [row.name, row.sha256]));
  const unchanged = files.length === recorded.size && files.every((file) => recorded.get(file.name) === file.sha256);
  if (unchanged) return [];
  await client.query("begin");
  try {
    for (const file of files) {
      try {
        await client.query(file.text);
      } catch (error) {
        throw new Error(`sql/${file.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
    await client.query("delete from chatd_meta.repeatable_sql");
    for (const file of files) {
      await client.query("insert into chatd_meta.repeatable_sql (name, sha256) values ($1, $2)", [file.name, file.sha256]);
    }
    await client.query("commit");
  } catch (error) {
    await client.query("rollback");
    throw error;
  }
  return files.map((file) => file.name);
}

const quietLogger = new Logger(() => () => {});

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("set client_min_messages = warning");
    await client.query("select pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    await client.query("create schema if not exists chatd_meta");
    const applied = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: "pgmigrations",
      migrationsSchema: "chatd_meta",
      direction: "up",
      count: Infinity,
      checkOrder: true,
      singleTransaction: true,
      noLock: true,
      log: () => {},
    });
    const migrationsApplied = applied.map((migration) => migration.name);
    for (const name of migrationsApplied) log(`applied migration ${name}`);
    // The queue's own schema: the repeatable definitions call graphile_worker.add_job.
    await runWorkerMigrations({ connectionString: databaseUrl, logger: quietLogger });
    const sqlFilesApplied = await applyRepeatable(client);
    if (sqlFilesApplied.length > 0) log(`applied ${sqlFilesApplied.length} repeatable sql/ files`);
    return { migrationsApplied, sqlFilesApplied };
  } finally {
    await client.query("select pg_advisory_unlock_all()").catch(() => {});
    await client.end();
  }
}
