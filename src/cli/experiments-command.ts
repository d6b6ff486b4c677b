// `chatd experiments list|enable|disable NAME`: a row in chat_private.experiments, so every replica agrees at once.
import type { Command } from "commander";
import pg from "pg";
import type { ResolvedDatabase } from "../db/database.ts";

async function withClient<T>(open: () => Promise<ResolvedDatabase>, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const db = await open();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
    await db.stop();
  }
}

export function registerExperimentsCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  const experiments = program.command("experiments").description("list or switch server-wide experiments");
  experiments.command("list").action(() =>
    withClient(open, async (client) => {
      const { rows } = await client.query<{ name: string; enabled: boolean; description: string }>(
        "select name, enabled, description from chat_private.experiments order by name");
      for (const row of rows) console.log(`${row.name}\t${row.enabled ? "enabled" : "disabled"}\t${row.description}`);
    }));
  for (const [verb, enabled] of [["enable", true], ["disable", false]] as const) {
    experiments.command(`${verb} <name>`).action((name: string) =>
      withClient(open, async (client) => {
        const { rowCount } = await client.query(
          "update chat_private.experiments set enabled = $2, updated_at = now() where name = $1", [name, enabled]);
        if (rowCount === 0) {
          console.error(`unknown experiment: ${name} (see \`chatd experiments list\`)`);
          process.exitCode = 1;
          return;
        }
        console.log(`${name} ${enabled ? "enabled" : "disabled"}`);
      }));
  }
}
