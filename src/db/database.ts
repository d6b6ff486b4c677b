// Where chatd's database is: DATABASE_URL when set, otherwise an embedded PostgreSQL in the project's data folder.
import { join } from "node:path";
import pg from "pg";
import { startEmbedded } from "./embedded.ts";

export const projectRoot = join(import.meta.dirname, "..", "..");

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** Creates `name` on the server of `adminUrl` unless it exists. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (rowCount === 0) await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export async function resolveDatabase(log: (line: string) => void = () => {}): Promise<ResolvedDatabase> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return { url: fromEnv, embedded: false, stop: async () => {} };
  const dataDir = process.env.CHATD_DATA_DIR ?? join(projectRoot, ".chatd", "postgres");
  const server = await startEmbedded({ dataDir, log: (line) => log(`[postgres] ${line}`) });
  await ensureDatabase(server.url, "chatd");
  return { url: withDatabase(server.url, "chatd"), embedded: true, stop: () => server.stop() };
}
