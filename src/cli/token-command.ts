// `chatd token --user NAME`: creates the user when missing and prints a development token (HS256, signed with
// CHATD_JWT_SECRET or the generated secret in .chatd/jwt-secret, the one the API verifies with). It always carries
// `exp`: --days, at most CHATD_TOKEN_MAX_LIFETIME_DAYS (the API refuses longer-lived tokens).
import type { Command } from "commander";
import pg from "pg";
import { maxTokenLifetimeSeconds, resolveJwtSecret, signToken } from "../api/auth.ts";
import type { ResolvedDatabase } from "../db/database.ts";

export function registerTokenCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  program
    .command("token")
    .description("create a user if needed and print a token for it (development)")
    .requiredOption("-u, --user <name>", "user name (letters, digits, _ . @ -)")
    .option("--days <n>", "validity in days (at most CHATD_TOKEN_MAX_LIFETIME_DAYS, default 90)", (value) => Number(value), 30)
    .action(async (options: { user: string; days: number }) => {
      const seconds = Math.round(options.days * 86_400);
      if (!(seconds > 0) || seconds > maxTokenLifetimeSeconds()) {
        throw new Error(`--days must be positive and at most ${maxTokenLifetimeSeconds() / 86_400} (CHATD_TOKEN_MAX_LIFETIME_DAYS)`);
      }
      const db = await open();
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string }>(
          `insert into chat_public.users (name) values ($1) on conflict (name) do update set name = excluded.name returning id`,
          [options.user]);
        console.log(signToken(resolveJwtSecret(), rows[0]!.id, seconds));
      } finally {
        await client.end();
        await db.stop();
      }
    });
}
