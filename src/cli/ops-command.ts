// `chatd ops status`: one screen summarising the operator views of sql/090_operations.sql and the batch progress
// view of sql/095_batches.sql. It reads only views, as chat_operator (what an operator could type in psql; Graphile
// Worker's queue through chat_private.job_queue), and changes nothing; the repair functions stay SQL calls, listed
// at the end with the README section that explains them.
import type { Command } from "commander";
import type pg from "pg";
import type { ResolvedDatabase } from "../db/database.ts";
import { registerDeleteCommands } from "./ops-delete-command.ts";
import { withOperatorClient } from "./operator-session.ts";

interface Summary {
  leases_live: number;
  leases_expired: number;
  stuck: { chat_id: string; status: string; stuck_for: string; recoveries: number | null }[];
  stuck_total: number;
  outcomes: { status: string; code: string | null; n: number }[];
  pending: number;
  failures: { at: Date; kind: string; chat_id: string; code: string | null; message: string | null }[];
  queued_chats: number;
  queued_inputs: number;
  oldest_queued: string | null;
  at_bound: number;
  jobs: { task: string; state: string; n: number }[];
  batches: { batch_id: string; name: string | null; status: string; total_items: number; finished_items: number;
    running: number; items_per_second: string | null; eta: string | null }[];
  retention: { rule: string; days: number; due: number }[];
}

const SUMMARY_SQL = `
select
  (select count(*)::int from chat_private.lease_holders where live) as leases_live,
  (select count(*)::int from chat_private.lease_holders where not live) as leases_expired,
  (select coalesce(json_agg(s), '[]') from (select chat_id, status, date_trunc('second', stuck_for)::text as stuck_for, recoveries
     from chat_private.stuck_chats order by stuck_for desc limit 5) s) as stuck,
  (select count(*)::int from chat_private.stuck_chats) as stuck_total,
  (select coalesce(json_agg(o order by o.n desc), '[]') from (select status::text, error_code as code, sum(requests)::int as n
     from chat_private.request_outcomes_hourly where hour >= now() - interval '24 hours' and status <> 'pending'
     group by 1, 2) o) as outcomes,
  (select count(*)::int from chat_public.structured_output_requests where status = 'pending') as pending,
  (select coalesce(json_agg(f), '[]') from (select at, kind, chat_id, code, left(message, 80) as message
     from chat_private.recent_failures order by at desc limit 5) f) as failures,
  (select count(*)::int from chat_private.queue_depth) as queued_chats,
  (select coalesce(sum(queued), 0)::int from chat_private.queue_depth) as queued_inputs,
  (select date_trunc('second', now() - min(oldest))::text from chat_private.queue_depth) as oldest_queued,
  (select count(*)::int from chat_private.turns_at_recovery_bound where finished_at is null) as at_bound,
  (select coalesce(json_agg(j), '[]') from (select q.task_identifier as task, s.state, s.n::int as n
     from chat_private.job_queue q cross join lateral (values ('waiting', q.waiting), ('scheduled', q.scheduled),
       ('running', q.running), ('locked_by_dead_worker', q.locked_by_dead_worker), ('failed', q.failed_permanently)) s (state, n)
     where s.n > 0 order by 1, 2) j) as jobs,
  (select coalesce(json_agg(b), '[]') from (select batch_id, name, status::text, total_items, finished_items::int, running::int,
     items_per_second::text, date_trunc('second', eta)::text as eta
     from chat_private.batch_progress where finished_at is null order by created_at desc limit 5) b) as batches,
  (select json_agg(r) from chat_private.retention_due() r) as retention`;

export async function readSummary(client: pg.ClientBase): Promise<Summary> {
  const { rows } = await client.query<Summary>(SUMMARY_SQL);
  return rows[0]!;
}

export function formatSummary(s: Summary): string {
  const out: string[] = [];
  const section = (title: string) => out.push("", `== ${title}`);
  out.push(`chatd ops status  (${new Date().toISOString()})`);
  section("workers");
  out.push(`leases: ${s.leases_live} live, ${s.leases_expired} expired   jobs: ${
    s.jobs.length === 0 ? "none" : s.jobs.map((j) => `${j.task}/${j.state} ${j.n}`).join(", ")}`);
  section(`stuck chats (chat_private.stuck_chats): ${s.stuck_total}`);
  for (const c of s.stuck) out.push(`  ${c.chat_id}  ${c.status}  stuck ${c.stuck_for}  recoveries ${c.recoveries ?? 0}`);
  if (s.stuck_total > 0) out.push("  a row that stays means no worker runs; repair: select chat_private.operator_release_lease('<chat_id>');");
  out.push(`turns at the recovery bound: ${s.at_bound}`);
  section("structured requests, last 24 h (chat_private.request_outcomes_hourly)");
  out.push(`pending now: ${s.pending}`);
  for (const o of s.outcomes) out.push(`  ${o.status}${o.code != null ? `/${o.code}` : ""}: ${o.n}`);
  section("recent failures (chat_private.recent_failures)");
  if (s.failures.length === 0) out.push("  none");
  for (const f of s.failures) out.push(`  ${new Date(f.at).toISOString()}  ${f.kind}  ${f.chat_id}  ${f.code ?? "-"}: ${f.message ?? ""}`);
  section("queues (chat_private.queue_depth)");
  out.push(`${s.queued_inputs} queued inputs in ${s.queued_chats} chats${s.oldest_queued != null ? `, oldest ${s.oldest_queued}` : ""}`);
  section("active batches (chat_private.batch_progress)");
  if (s.batches.length === 0) out.push("  none");
  for (const b of s.batches) {
    out.push(`  ${b.batch_id}  ${b.name ?? ""}  ${b.status}  ${b.finished_items}/${b.total_items} done, running ${b.running}` +
      `${b.items_per_second != null ? `, ${b.items_per_second} items/s` : ""}${b.eta != null ? `, ETA ${b.eta}` : ""}`);
  }
  section("retention (chat_private.retention_due(); days 0 = off)");
  for (const r of s.retention) out.push(`  ${r.rule}: ${r.days > 0 ? `after ${r.days} days, ${r.due} due now` : "off"}`);
  out.push("", "repairs: chat_private.operator_release_lease, operator_cancel_request, operator_retry_chat, operator_cancel_batch (README: Operating chatd)");
  return out.join("\n");
}

export function registerOpsCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  const ops = program.command("ops").description("operator views: what is stuck, failing, queued, running or due for deletion; deletions");
  ops.command("status").description("a one-screen summary of the operator views").action(async () => {
    await withOperatorClient(open, async (client) => console.log(formatSummary(await readSummary(client))));
  });
  registerDeleteCommands(ops, open);
}
