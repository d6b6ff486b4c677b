// `chatd token --user NAME`: creates the user when missing and prints a development token (HS256, signed with
// CHATD_JWT_SECRET or the generated secret in .chatd/jwt-secret, the one the API verifies with).
import type { Command } from "commander";
import pg from "pg";
import { resolveJwtSecret, signToken } from "../api/auth.ts";
import type { ResolvedDatabase } from "../db/database.ts";

export function registerTokenCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  program
    .command("token")
    .description("create a user if needed and print a token for it (development)")
    .requiredOption("-u, --user <name>", "user name (letters, digits, _ . @ -)")
    .option("--days <n>", "validity in days", (value) => Number(value), 30)
    .action(async (options: { user: string; days: number }) => {
      const db = await open();
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string }>(
          `insert into chat_public.users (name) values ($1) on conflict (name) do update set name = excluded.name returning id`,
          [options.user]);
        console.log(signToken(resolveJwtSecret(), rows[0]!.id, Math.round(options.days * 86_400)));
      } finally {
        await client.end();
        await db.stop();
      }
    });
}
