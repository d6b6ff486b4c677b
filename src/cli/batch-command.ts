// `chatd batch submit|status|wait|results|cancel`. The CLI talks SQL to the database (DATABASE_URL, else the
// embedded one) as chat_operator (operator-session.ts): submit validates the schema once and every line through the JSON safety boundary before anything
// is stored, then calls chat_private.operator_create_batch for the named user; the worker dispatches the items.
// `wait` is driven by NOTIFY on chatd:batch:<id> (no polling): each hint re-reads the counts, at most every 200 ms.
import { basename, extname } from "node:path";
import type { Writable } from "node:stream";
import cliProgress from "cli-progress";
import { InvalidArgumentError, type Command } from "commander";
import pg from "pg";
import type { ResolvedDatabase } from "../db/database.ts";
import { ensureUser, withOperatorClient } from "./operator-session.ts";
import { loadBatchSchema, parseBatchInput, submissionKey, writeResults } from "./batch-io.ts";
import { batchChannel } from "../channels.ts";
import { readUserFile, userOutputStream } from "./user-files.ts";

export interface SubmitOptions {
  user: string;
  schema: string;
  input: string;
  name?: string;
  model?: string;
  workspace?: string;
  concurrency: number;
}

export type SubmitResult =
  | { ok: true; batchId: string; existing: boolean; total: number; bad: { line: number; error: string }[] }
  | { ok: false; errors: string[] };

/** Validates, then submits. Nothing is stored when the schema is invalid. */
export async function submitBatch(client: pg.ClientBase, o: SubmitOptions): Promise<SubmitResult> {
  const schemaName = (o.name ?? basename(o.schema, extname(o.schema))).replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  const schemaText = (await readUserFile(o.schema)).toString("utf8");
  const schema = loadBatchSchema(schemaText, schemaName);
  if (!schema.ok) return { ok: false, errors: schema.errors.map((e) => `${e.field}: ${e.detail}`) };
  const inputText = (await readUserFile(o.input)).toString("utf8");
  const input = parseBatchInput(inputText);
  if (input.total === 0) return { ok: false, errors: [`${o.input}: no input lines`] };
  const key = submissionKey(schema.envelopeText, inputText,
    { name: o.name ?? null, model: o.model ?? null, workspace: o.workspace ?? null, concurrency: o.concurrency });
  const owner = await ensureUser(client, o.user);
  const { rows: before } = await client.query("select 1 from chat_public.batches where owner_id = $1 and idempotency_key = $2", [owner, key]);
  const { rows } = await client.query<{ id: string }>(
    "select (chat_private.operator_create_batch($1, $2, $3::jsonb, $4, $5, $6, $7, $8)).id",
    [owner, schema.envelopeText, input.itemsJson, o.name ?? null, o.model ?? null, o.workspace ?? null, o.concurrency, key]);
  return { ok: true, batchId: rows[0]!.id, existing: before.length > 0, total: input.total, bad: input.bad };
}

export interface Progress {
  status: string;
  name: string | null;
  concurrency: number;
  total: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  canceled: number;
  finished: number;
  finishedAt: Date | null;
  rate: number | null;
  etaSeconds: number | null;
  error: string | null;
  codes: { status: string; code: string; n: number }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function readProgress(client: pg.ClientBase, batchId: string): Promise<Progress | undefined> {
  if (!UUID.test(batchId)) return undefined;
  const { rows } = await client.query(
    `select p.status::text, p.name, p.concurrency, p.total_items, p.pending::int, p.running::int, p.succeeded::int,
            p.failed::int, p.canceled::int, p.finished_items::int, p.finished_at, p.items_per_second::float8 as rate,
            extract(epoch from p.eta)::float8 as eta, p.error,
            (select coalesce(json_agg(c order by c.n desc), '[]') from (select status::text, error_code as code, count(*)::int as n
               from chat_public.batch_items where batch_id = p.batch_id and error_code is not null group by 1, 2) c) as codes
     from chat_private.batch_progress p where p.batch_id = $1`, [batchId]);
  const r = rows[0];
  if (r == null) return undefined;
  return { status: r.status, name: r.name, concurrency: r.concurrency, total: r.total_items, pending: r.pending,
    running: r.running, succeeded: r.succeeded, failed: r.failed, canceled: r.canceled, finished: r.finished_items,
    finishedAt: r.finished_at, rate: r.rate, etaSeconds: r.eta, error: r.error, codes: r.codes };
}

const duration = (seconds: number) => {
  const s = Math.round(seconds);
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
};

export function formatStatus(id: string, p: Progress): string {
  const lines = [
    `batch ${id}${p.name != null ? ` "${p.name}"` : ""}: ${p.status}${p.finishedAt != null ? " (finished)" : ""}, concurrency ${p.concurrency}`,
    `items ${p.total}: pending ${p.pending}, running ${p.running}, succeeded ${p.succeeded}, failed ${p.failed}, canceled ${p.canceled}`,
  ];
  if (p.codes.length > 0) lines.push(`codes: ${p.codes.map((c) => `${c.status}/${c.code} ${c.n}`).join(", ")}`);
  lines.push(`rate ${p.rate != null ? `${p.rate.toFixed(1)} items/s` : "-"}${p.etaSeconds != null ? `, ETA ${duration(p.etaSeconds)}` : ""}`);
  if (p.error != null) lines.push(`error: ${p.error}`);
  return lines.join("\n");
}

export const progressLine = (p: Progress) =>
  `${p.finished}/${p.total} done (running ${p.running}, succeeded ${p.succeeded}, failed ${p.failed}, canceled ${p.canceled})` +
  `${p.rate != null ? ` ${p.rate.toFixed(1)} items/s` : ""}${p.etaSeconds != null ? ` ETA ${duration(p.etaSeconds)}` : ""}`;

/**
 * Waits for the batch to finish, re-reading progress on each NOTIFY (LISTEN starts before the first read, so no
 * change is missed). A terminal gets a progress bar; anything else gets a plain line at most once a second.
 */
export async function waitForBatch(url: string, batchId: string, out: Writable & { isTTY?: boolean }): Promise<Progress | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const tty = out.isTTY === true;
  const bar = tty ? new cliProgress.SingleBar({ stream: out, format: "{bar} {value}/{total} | {detail}", hideCursor: true },
    cliProgress.Presets.shades_classic) : undefined;
  let lastLine = 0;
  let lastText = "";
  try {
    await client.query(`listen ${pg.escapeIdentifier(batchChannel(batchId))}`);
    let dirty = false;
    let wake: (() => void) | undefined;
    client.on("notification", () => {
      dirty = true;
      wake?.();
    });
    for (let started = false; ;) {
      dirty = false;
      const p = await readProgress(client, batchId);
      if (p == null) return undefined;
      const done = p.finishedAt != null;
      if (bar != null) {
        if (!started) bar.start(p.total, p.finished, { detail: "" });
        bar.update(p.finished, { detail: `running ${p.running} · ok ${p.succeeded} · failed ${p.failed} · canceled ${p.canceled}` });
      } else {
        const text = progressLine(p);
        if (text !== lastText && (done || Date.now() - lastLine >= 1000)) {
          out.write(`${text}\n`);
          lastText = text;
          lastLine = Date.now();
        }
      }
      started = true;
      if (done) return p;
      // A hint that arrived during the read counts; otherwise sleep until the next one.
      if (!dirty) await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
      // Coalesce a burst of hints into one read.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    bar?.stop();
    await client.end();
  }
}

const positive = (max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`an integer from 1 to ${max}`);
  return n;
};

const notFound = (id: string) => {
  console.error(`batch ${id} not found`);
  process.exitCode = 1;
};

export function registerBatchCommand(program: Command, open: () => Promise<ResolvedDatabase>): void {
  const batch = program.command("batch").description("submit and watch batch runs of structured requests");
  batch.command("submit")
    .description("validate a schema and a JSONL file of prompts, then submit them as one batch")
    .requiredOption("--schema <file>", "a JSON Schema, or a response_format envelope")
    .requiredOption("--input <file>", "JSONL: one prompt per line (a JSON string, {\"prompt\"} or {\"content\"})")
    .requiredOption("-u, --user <name>", "the owner of the batch (created if missing)")
    .option("--name <name>", "batch name (also the schema name when the file is a bare schema)")
    .option("--model <id>", "model config id (default: the default model config)")
    .option("--workspace <name>", "workspace folder for every item")
    .option("--concurrency <n>", "items running at once (1-64)", positive(64), 4)
    .action((o: SubmitOptions) => withOperatorClient(open, async (client) => {
      const result = await submitBatch(client, o);
      if (!result.ok) {
        for (const error of result.errors) console.error(`invalid schema: ${error}`);
        console.error("nothing was submitted");
        process.exitCode = 1;
        return;
      }
      for (const bad of result.bad) console.error(bad.error);
      console.error(`${result.total} lines, ${result.bad.length} invalid (they fail alone)${result.existing ? "; this file was already submitted" : ""}`);
      console.log(result.batchId);
    }));
  batch.command("status <id>").description("counts by status and error code, rate and ETA")
    .action((id: string) => withOperatorClient(open, async (client) => {
      const p = await readProgress(client, id);
      if (p == null) return notFound(id);
      console.log(formatStatus(id, p));
    }));
  batch.command("wait <id>").description("wait for the batch to finish, showing progress (driven by NOTIFY)")
    .action((id: string) => withOperatorClient(open, async (_client, url) => {
      const p = await waitForBatch(url, id, process.stderr);
      if (p == null) return notFound(id);
      console.log(formatStatus(id, p));
      if (p.status === "failed") process.exitCode = 1;
    }));
  batch.command("results <id>").description("write every item's result: line, request id, status, exact value, error")
    .option("--format <format>", "jsonl or csv", (v) => {
      if (v !== "jsonl" && v !== "csv") throw new InvalidArgumentError("jsonl or csv");
      return v;
    }, "jsonl")
    .option("--out <file>", "write to a file instead of standard output")
    .action((id: string, o: { format: "jsonl" | "csv"; out?: string }) => withOperatorClient(open, async (client) => {
      if ((await readProgress(client, id)) == null) return notFound(id);
      const out = o.out != null ? await userOutputStream(o.out) : process.stdout;
      const n = await writeResults(client, id, o.format, out);
      if (o.out != null) {
        await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
        console.error(`${n} results written to ${o.out}`);
      }
    }));
  batch.command("cancel <id>").description("cancel: pending items never start, running ones are interrupted")
    .option("--reason <text>", "why (kept on the batch)", "canceled from the chatd CLI")
    .action((id: string, o: { reason: string }) => withOperatorClient(open, async (client) => {
      try {
        const { rows } = await client.query("select (chat_private.operator_cancel_batch($1, $2)).status::text as status", [id, o.reason]);
        console.log(`batch ${id}: ${rows[0].status}`);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code !== "BTNTF" && code !== "BTDON" && code !== "22P02") throw error;
        console.error(code === "BTDON" ? `batch ${id} has already finished` : `batch ${id} not found`);
        process.exitCode = 1;
      }
    }));
}
