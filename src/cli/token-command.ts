// `chatd token --user NAME`: creates the user when missing and prints a development token (HS256, signed with
// CHATD_JWT_SECRET or the generated secret in .chatd/jwt-secret, the one the API verifies with). It always carries
// `exp`: --days, at most CHATD_TOKEN_MAX_LIFETIME_DAYS (the API refuses longer-lived tokens). The user is read or
// created as chat_operator (operator-session.ts); the signing secret, not the database role, is what this needs.
import type { Command } from "commander";
import { maxTokenLifetimeSeconds, resolveJwtSecret, signToken } from "../api/auth.ts";
import type { ResolvedDatabase } from "../db/database.ts";
import { ensureUser, withOperatorClient } from "./operator-session.ts";

export function registerTokenCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  program
    .command("token")
    .description("create a user if needed and print a token for it (development)")
    .requiredOption("-u, --user <name>", "user name (letters, digits, _ . @ -)")
    .option("--days <n>", "validity in days (at most CHATD_TOKEN_MAX_LIFETIME_DAYS, itself 90 by default)", (value) => Number(value), 30)
    .action(async (options: { user: string; days: number }) => {
      const seconds = Math.round(options.days * 86_400);
      if (!(seconds > 0) || seconds > maxTokenLifetimeSeconds()) {
        throw new Error(`--days must be positive and at most ${maxTokenLifetimeSeconds() / 86_400} (CHATD_TOKEN_MAX_LIFETIME_DAYS)`);
      }
      const userId = await withOperatorClient(open, (client) => ensureUser(client, options.user));
      console.log(signToken(resolveJwtSecret(), userId, seconds));
    });
}
