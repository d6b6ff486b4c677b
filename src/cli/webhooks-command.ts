// `chatd webhooks add|list|remove|rotate|deliveries|replay`: completion webhook endpoints per user (Standard
// Webhooks, docs/openai.md). Works as chat_operator through the functions of sql/150_webhooks.sql. A secret is
// generated here and printed once, on the last line of `add` and `rotate`; nothing lists it again.
import type { Command } from "commander";
import type { ResolvedDatabase } from "../db/database.ts";
import { newSecret } from "../webhooks/signing.ts";
import { ensureUser, withOperatorClient } from "./operator-session.ts";
// A refusal of the command line itself: main.ts prints its message alone and exits 2.
import { UserFileError } from "./user-files.ts";

export const WEBHOOK_EVENTS = ["response.completed", "response.failed", "response.cancelled", "response.incomplete",
  "batch.completed", "batch.failed", "batch.cancelled"] as const;
const DEFAULT_EVENTS = WEBHOOK_EVENTS.filter((event) => event.startsWith("response."));

function eventsOf(value: string | undefined): string[] {
  if (value === undefined) return [...DEFAULT_EVENTS];
  const events = value.split(",").map((event) => event.trim()).filter((event) => event !== "");
  const unknown = events.filter((event) => !(WEBHOOK_EVENTS as readonly string[]).includes(event));
  if (events.length === 0 || unknown.length > 0) {
    throw new UserFileError(`--events takes a comma-separated list of: ${WEBHOOK_EVENTS.join(", ")}`);
  }
  return events;
}

function urlOf(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserFileError("--url must be an absolute http(s) URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UserFileError("--url must be an http(s) URL");
  if (url.username !== "" || url.password !== "") throw new UserFileError("--url must not carry credentials");
  return url.toString();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function endpointId(value: string): string {
  if (!UUID.test(value)) throw new UserFileError("the endpoint id is a UUID (see `chatd webhooks list`)");
  return value;
}

export function registerWebhooksCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  const webhooks = program.command("webhooks").description("completion webhook endpoints (Standard Webhooks signatures)");
  webhooks.command("add")
    .description("add an endpoint for a user; prints its signing secret (whsec_...) on the last line")
    .requiredOption("-u, --user <name>", "the user whose Responses the endpoint hears about")
    .requiredOption("--url <url>", "where events are POSTed (https in production)")
    .option("--events <list>", `comma-separated event types (default: ${DEFAULT_EVENTS.join(",")})`)
    .action(async (options: { user: string; url: string; events?: string }) => {
      const url = urlOf(options.url);
      const events = eventsOf(options.events);
      const secret = newSecret();
      const id = await withOperatorClient(open, async (client) => {
        const owner = await ensureUser(client, options.user);
        const { rows } = await client.query<{ id: string }>("select chat_private.webhook_add($1, $2, $3, $4) as id",
          [owner, url, events, secret]);
        return rows[0]!.id;
      });
      console.log(`endpoint ${id} for ${options.user}: ${url} (${events.join(", ")})`);
      console.log(secret);
    });
  webhooks.command("list")
    .description("list endpoints (never their secrets) with their deliveries by status")
    .option("-u, --user <name>", "only this user's endpoints")
    .action(async (options: { user?: string }) => {
      const rows = await withOperatorClient(open, async (client) => {
        const owner = options.user === undefined ? null : (await client.query<{ id: string }>(
          "select id from chat_public.users where name = $1", [options.user])).rows[0]?.id;
        if (owner === undefined) throw new UserFileError(`no user ${options.user}`);
        return (await client.query("select * from chat_private.webhook_list($1)", [owner])).rows;
      });
      console.log(JSON.stringify(rows, null, 2));
    });
  webhooks.command("remove <id>")
    .description("remove an endpoint (its deliveries go with it)")
    .action(async (id: string) => {
      const removed = await withOperatorClient(open, async (client) =>
        (await client.query<{ ok: boolean | null }>("select chat_private.webhook_remove($1) as ok", [endpointId(id)])).rows[0]?.ok);
      if (!removed) throw new UserFileError(`no endpoint ${id}`);
      console.log(`removed ${id}`);
    });
  webhooks.command("rotate <id>")
    .description("give an endpoint a new secret, printed on the last line; the old one keeps signing for --overlap-hours")
    .option("--overlap-hours <n>", "hours both secrets sign (0: the old one stops now)", (value) => Number(value), 24)
    .action(async (id: string, options: { overlapHours: number }) => {
      if (!(options.overlapHours >= 0) || options.overlapHours > 24 * 7) throw new UserFileError("--overlap-hours must be between 0 and 168");
      const secret = newSecret();
      const rotated = await withOperatorClient(open, async (client) => (await client.query<{ ok: boolean | null }>(
        "select chat_private.webhook_rotate($1, $2, make_interval(hours => $3)) as ok", [endpointId(id), secret, options.overlapHours])).rows[0]?.ok);
      if (!rotated) throw new UserFileError(`no endpoint ${id}`);
      console.log(`rotated ${id}; the previous secret signs for ${options.overlapHours} more hours`);
      console.log(secret);
    });
  webhooks.command("deliveries")
    .description("the delivery log, newest first, with each attempt")
    .option("--endpoint <id>", "only this endpoint's deliveries")
    .option("--limit <n>", "how many deliveries", (value) => Number(value), 20)
    .action(async (options: { endpoint?: string; limit: number }) => {
      const rows = await withOperatorClient(open, async (client) => (await client.query(
        `select d.id, d.endpoint_id, d.event_id, d.event_type, d.subject_id, d.status, d.attempts, d.next_attempt_at,
                d.delivered_at, d.created_at,
                coalesce((select json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'status_code', a.status_code,
                  'error', a.error) order by a.attempt) from chat_private.webhook_attempts a where a.delivery_id = d.id), '[]') as log
         from chat_private.webhook_deliveries d where $1::uuid is null or d.endpoint_id = $1
         order by d.id desc limit $2`,
        [options.endpoint === undefined ? null : endpointId(options.endpoint), Math.max(1, Math.min(options.limit, 1000))])).rows);
      console.log(JSON.stringify(rows, null, 2));
    });
  webhooks.command("replay <deliveryId>")
    .description("send a delivery again, with the same webhook-id (a failed one, or one the receiver lost)")
    .action(async (deliveryId: string) => {
      if (!/^\d{1,18}$/.test(deliveryId)) throw new UserFileError("the delivery id is a number (see `chatd webhooks deliveries`)");
      const ok = await withOperatorClient(open, async (client) => (await client.query<{ ok: boolean }>(
        "select chat_private.webhook_replay($1) as ok", [deliveryId])).rows[0]?.ok);
      if (!ok) throw new UserFileError(`no delivery ${deliveryId}, or its endpoint is disabled (see \`chatd webhooks list\`)`);
      console.log(`delivery ${deliveryId} queued again`);
    });
}
