// The schema contract: the newest migration and the checksum of the sql/ layer a database was migrated to, recorded
// by `chatd migrate` when a run completes. `chatd serve`, `start` and `worker` start only against the contract of
// their own build, so that no process runs against a schema it does not understand; `chatd migrate --check`
// reports what a migration would do without doing it.
import { readdirSync } from "node:fs";
import { basename, extname, join } from "node:path";
import pg from "pg";
import { projectRoot } from "./database.ts";
import { layerSha256, readSqlFiles, recordedStatements, statementsOf, statementsToApply, tableExists } from "./repeatable.ts";

export const MIGRATIONS_DIR = join(projectRoot, "migrations");

/** Exit codes of a refused start (and of `migrate --check`): distinct from 1, the code of any other failure. */
export const EXIT_SCHEMA_BEHIND = 3;
export const EXIT_SCHEMA_AHEAD = 4;

export interface Contract {
  migration: string;
  sqlSha256: string;
}

export interface RecordedState {
  /** The contract the last completed `chatd migrate` wrote, if any. */
  migration: string | null;
  sqlSha256: string | null;
  /** Migrations of this build the database has not applied. */
  pendingMigrations: string[];
  /** Migrations the database applied that this build does not have: the database is newer than this build. */
  unknownMigrations: string[];
}

/** As node-pg-migrate names them: every file of migrations/ not starting with a dot, without its extension. */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR).filter((name) => !name.startsWith(".")).sort()
    .map((name) => basename(name, extname(name)));
}

export function targetContract(): Contract {
  const migrations = migrationNames();
  return { migration: migrations[migrations.length - 1] ?? "", sqlSha256: layerSha256(readSqlFiles()) };
}

export class SchemaAheadError extends Error {
  readonly exitCode = EXIT_SCHEMA_AHEAD;
  constructor(unknownMigrations: string[]) {
    super(`the database has migrations this build of chatd does not know (${unknownMigrations.join(", ")}): ` +
      "it was migrated by a newer chatd; run that version, or restore the database (see docs/upgrading.md)");
  }
}

export async function readContract(client: pg.ClientBase): Promise<RecordedState> {
  const applied = new Set(!(await tableExists(client, "chatd_meta.pgmigrations")) ? [] :
    (await client.query<{ name: string }>("select name from chatd_meta.pgmigrations")).rows.map((row) => row.name));
  const contract = !(await tableExists(client, "chatd_meta.schema_contract")) ? undefined :
    (await client.query<{ migration: string; sql_sha256: string }>(
      "select migration, sql_sha256 from chatd_meta.schema_contract")).rows[0];
  const known = migrationNames();
  return {
    migration: contract?.migration ?? null,
    sqlSha256: contract?.sql_sha256 ?? null,
    pendingMigrations: known.filter((name) => !applied.has(name)),
    unknownMigrations: [...applied].filter((name) => !known.includes(name)),
  };
}

/** In the transaction that applies the sql/ layer: the contract holds only once everything is in place. */
export async function writeContract(client: pg.ClientBase, contract: Contract): Promise<void> {
  await client.query(`create table if not exists chatd_meta.schema_contract (
    id boolean primary key default true check (id), migration text not null, sql_sha256 text not null,
    migrated_at timestamptz not null default now())`);
  await client.query(
    `insert into chatd_meta.schema_contract (migration, sql_sha256) values ($1, $2)
     on conflict (id) do update set migration = excluded.migration, sql_sha256 = excluded.sql_sha256, migrated_at = now()`,
    [contract.migration, contract.sqlSha256]);
}

export interface SchemaStatus {
  state: "current" | "behind" | "ahead";
  /** What is wrong and what to do, for a person; empty when current. */
  message: string;
  pendingMigrations: string[];
  /** sql/ files a `chatd migrate` of this build would apply statements of. */
  pendingSqlFiles: string[];
}

export function exitCodeOf(status: SchemaStatus): number {
  return status.state === "current" ? 0 : status.state === "behind" ? EXIT_SCHEMA_BEHIND : EXIT_SCHEMA_AHEAD;
}

/** Reads only: takes no lock and writes nothing. */
export async function schemaStatus(databaseUrl: string): Promise<SchemaStatus> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "chatd schema check" });
  client.on("error", () => undefined); // a lost connection fails the next query instead
  await client.connect();
  try {
    const target = targetContract();
    const recorded = await readContract(client);
    // Without the migrations' changes, which only a run knows: the statements whose text the database lacks.
    const pendingSqlFiles = [...new Set(statementsToApply(statementsOf(readSqlFiles()), await recordedStatements(client),
      new Set(), recorded.pendingMigrations.length > 0).map((statement) => statement.file))];
    const base = { pendingMigrations: recorded.pendingMigrations, pendingSqlFiles };
    if (recorded.unknownMigrations.length > 0) {
      return { ...base, state: "ahead", message: new SchemaAheadError(recorded.unknownMigrations).message };
    }
    if (recorded.pendingMigrations.length > 0 || recorded.migration === null) {
      const pending = recorded.pendingMigrations.length;
      return { ...base, state: "behind", message: `the database is behind this build of chatd (${pending} migration` +
        `${pending === 1 ? "" : "s"} pending${recorded.migration === null ? ", never migrated by this version" : ""}): ` +
        "run `chatd migrate` first" };
    }
    if (recorded.migration !== target.migration || recorded.sqlSha256 !== target.sqlSha256) {
      return { ...base, state: "behind", message: "the database's sql/ definitions are not this build's " +
        `(${pendingSqlFiles.length} file${pendingSqlFiles.length === 1 ? "" : "s"} differ): ` +
        "run `chatd migrate` from the build that should serve it" };
    }
    return { ...base, state: "current", message: "" };
  } finally {
    await client.end();
  }
}
