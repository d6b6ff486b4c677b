// The repeatable layer: the sql/ files, their checksums, and which of them a migration run re-applies.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { projectRoot } from "./database.ts";

export const SQL_DIR = join(projectRoot, "sql");

export interface SqlFile {
  name: string;
  text: string;
  sha256: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function readSqlFiles(dir = SQL_DIR): SqlFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort()
    .map((name) => {
      const text = readFileSync(join(dir, name), "utf8");
      return { name, text, sha256: sha256(text) };
    });
}

/** One checksum for the whole layer, in name order: part of the schema contract a database records. */
export function layerSha256(files: { name: string; sha256: string }[]): string {
  return sha256(files.map((file) => `${file.name} ${file.sha256}\n`).join(""));
}

/** name -> sha256 of what the database last applied; empty before the first run. */
export async function tableExists(client: pg.ClientBase, name: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>("select to_regclass($1) is not null as found", [name]);
  return rows[0]!.found;
}

export async function recordedChecksums(client: pg.ClientBase): Promise<Map<string, string>> {
  if (!(await tableExists(client, "chatd_meta.repeatable_sql"))) return new Map();
  const { rows } = await client.query<{ name: string; sha256: string }>("select name, sha256 from chatd_meta.repeatable_sql");
  return new Map(rows.map((row) => [row.name, row.sha256]));
}

/**
 * The files a run re-applies. A file may build on the files before it (085 tags the comments 080 wrote, so 080
 * alone would drop the tags), never on later ones: a changed file is re-applied with every file after it. After a
 * migration, everything is: a migration may define what a file defines (a trigger's function) or depend on it.
 * Removed files need nothing re-applied; what they defined stays until a migration drops it.
 */
export function filesToApply(files: SqlFile[], recorded: Map<string, string>, afterMigration: boolean): SqlFile[] {
  if (afterMigration) return files;
  const first = files.findIndex((file) => recorded.get(file.name) !== file.sha256);
  return first < 0 ? [] : files.slice(first);
}

/** Applies `files` and records the checksums of all of `files` in the caller's open transaction. */
export async function applyFiles(client: pg.ClientBase, files: SqlFile[], all: SqlFile[]): Promise<void> {
  for (const file of files) {
    try {
      await client.query(file.text);
    } catch (error) {
      throw new Error(`sql/${file.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  await client.query("delete from chatd_meta.repeatable_sql where not (name = any ($1))", [all.map((file) => file.name)]);
  for (const file of files) {
    await client.query(
      `insert into chatd_meta.repeatable_sql (name, sha256) values ($1, $2)
       on conflict (name) do update set sha256 = excluded.sha256, applied_at = now()`, [file.name, file.sha256]);
  }
}
