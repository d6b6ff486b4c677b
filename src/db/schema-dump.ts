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

/** chatd's schemas; with `wholeDatabase`, every schema of the database (Graphile Worker's, chatd_meta, public). */
export async function dumpSchema(databaseUrl: string, options: { wholeDatabase?: boolean } = {}): Promise<string> {
  const schemas = options.wholeDatabase === true ? [] : ["--schema=chat_public", "--schema=chat_private"];
  const { stdout } = await run(pgDumpPath(), ["--schema-only", "--no-owner", "--no-tablespaces",
    ...schemas, `--dbname=${databaseUrl}`], { maxBuffer: 64 * 1024 * 1024 });
  return normalizeDump(stdout);
}

/**
 * The differences between two normalized dumps, entry by entry: `+ header` only in `actual`, `- header` only in
 * `expected`, and for an entry in both the lines that differ. Empty when they are the same.
 */
export function diffDumps(actual: string, expected: string): string[] {
  const entries = (dump: string) => new Map(dump.trim().split("\n\n").map((entry) => {
    const [header = "", ...lines] = entry.split("\n");
    return [header, lines] as const;
  }));
  const a = entries(actual);
  const b = entries(expected);
  const out: string[] = [];
  for (const [header, lines] of a) {
    const other = b.get(header);
    if (!other) {
      out.push(`+ ${header}`);
      continue;
    }
    const removed = other.filter((line) => !lines.includes(line)).map((line) => `  - ${line}`);
    const added = lines.filter((line) => !other.includes(line)).map((line) => `  + ${line}`);
    if (removed.length > 0 || added.length > 0 || lines.join("\n") !== other.join("\n")) {
      out.push(`~ ${header}`, ...removed, ...added);
    }
  }
  for (const header of b.keys()) if (!a.has(header)) out.push(`- ${header}`);
  return out;
}
