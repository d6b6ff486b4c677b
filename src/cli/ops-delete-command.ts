// `chatd ops delete-chat` and `chatd ops delete-user`: the operator's deletions (sql/160_data_lifecycle.sql), as
// chat_operator like every ops command. Each is one transaction; the report lists what went, by table.
import type { Command } from "commander";
import type pg from "pg";
import type { ResolvedDatabase } from "../db/database.ts";
import { withOperatorClient } from "./operator-session.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The report as `key: value` lines, in the function's order. */
export const formatReport = (title: string, report: Record<string, unknown>): string =>
  [title, ...Object.entries(report).map(([key, value]) => `  ${key}: ${String(value)}`)].join("\n");

async function userId(client: pg.ClientBase, user: string): Promise<string> {
  if (UUID.test(user)) return user;
  const { rows } = await client.query<{ id: string }>("select id from chat_public.users where name = $1", [user]);
  if (rows[0] == null) throw new Error(`no user named ${user}`);
  return rows[0].id;
}

export function registerDeleteCommands(ops: Command, open: () => Promise<ResolvedDatabase>): void {
  ops.command("delete-chat <chat-id>")
    .description("delete a chat of any user for good, with its subagent chats (a running turn is stopped)")
    .action(async (chatId: string) => {
      if (!UUID.test(chatId)) throw new Error("chat-id must be a chat's uuid");
      await withOperatorClient(open, async (client) => {
        const { rows } = await client.query<{ report: Record<string, unknown> }>(
          "select chat_private.operator_delete_chat($1) as report", [chatId]);
        console.log(formatReport(`deleted chat ${chatId}`, rows[0]!.report));
      });
    });
  ops.command("delete-user <user>")
    .description("delete a user (name or id) for good: every chat, batch, idempotency key and webhook endpoint; their tokens stop working")
    .requiredOption("--yes", "confirm: this cannot be undone")
    .action(async (user: string) => {
      await withOperatorClient(open, async (client) => {
        const { rows } = await client.query<{ report: Record<string, unknown> }>(
          "select chat_private.operator_delete_user($1) as report", [await userId(client, user)]);
        const report = rows[0]!.report;
        console.log(formatReport(`deleted user ${String(report.name)}`, { ...report,
          tokens: "refused from now on (their user id no longer exists and is never reused)", secrets: "the webhook endpoints' signing secrets went with them (chatd keeps no other per-user secret)" }));
      });
    });
}
