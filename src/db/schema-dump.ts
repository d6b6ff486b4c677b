// The normalized schema dump of chatd's schemas: `pg_dump --schema-only` of chat_public and chat_private without
// owners, header noise or session settings, its entries sorted by their pg_dump headers (and the lines of each
// privilege entry sorted) so that two databases with the same schema give the same text however they were built.
// `npm run schema:dump` writes it to schema.sql; test/migrate/ compares fresh and upgraded databases through it.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

/** pg_dump 15 (the server's major version): CHATD_PG_DUMP, else Debian's location, else PATH. */
export function pgDumpPath(): string {
  const candidates = [process.env.CHATD_PG_DUMP, "/usr/lib/postgresql/15/bin/pg_dump"];
  return candidates.find((path): path is string => path !== undefined && existsSync(path)) ?? "pg_dump";
}

export function normalizeDump(raw: string): string {
  const entries = new Map<string, string[]>();
  let header: string | null = null;
  for (const line of raw.split("\n")) {
    const match = /^-- (?:Data for )?Name: (.*); Type: (.*); Schema: (.*); Owner: .*$/.exec(line);
    if (match) {
      header = `-- ${match[2]} ${match[3]} ${match[1]}`;
      entries.set(header, entries.get(header) ?? []);
      continue;
    }
    // \restrict and \unrestrict carry a random key per dump (pg_dump 15.14 and later).
    if (header === null || line.startsWith("--") || line.startsWith("\\") || line.trim() === "") continue;
    entries.get(header)!.push(line);
  }
  return [...entries.keys()].sort().map((key) => {
    const lines = entries.get(key)!;
    return [key, ...(/^-- ACL /.test(key) ? [...lines].sort() : lines)].join("\n");
  }).join("\n\n") + "\n";
}

export async function dumpSchema(databaseUrl: string): Promise<string> {
  const { stdout } = await run(pgDumpPath(), ["--schema-only", "--no-owner", "--no-tablespaces",
    "--schema=chat_public", "--schema=chat_private", `--dbname=${databaseUrl}`], { maxBuffer: 64 * 1024 * 1024 });
  return normalizeDump(stdout);
}
