// The batch CLI's data paths, kept free of commander so tests call them directly: reading the schema and the
// JSONL input through the JSON safety boundary (src/structured), and writing results exactly as the receipts hold
// them (value_json is the stored JSON text: numbers keep every digit).
import { createHash } from "node:crypto";
import type { Writable } from "node:stream";
import type pg from "pg";
import {
  compactJson, ENVELOPE_LIMITS, isJsonObjectValue, NAME_PATTERN, parseJsonSafe, validateResponseFormat, type FieldError,
  type JsonValue,
} from "../structured/index.ts";

export type SchemaResult = { ok: true; envelopeText: string; name: string } | { ok: false; errors: FieldError[] };

/**
 * A schema file holds either a response_format envelope ({"type":"json_schema",...}) or a bare JSON Schema, which
 * is wrapped under `name` without re-serialising it (its exact text is what gets validated and stored).
 */
export function loadBatchSchema(text: string, name: string): SchemaResult {
  const parsed = parseJsonSafe(text, ENVELOPE_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return { ok: false, errors: [{ field: pointer === "" ? "(schema file)" : pointer, detail: `${rule}: ${message}` }] };
  }
  const isEnvelope = isJsonObjectValue(parsed.value) && parsed.value.get("type") === "json_schema";
  if (!isEnvelope && !NAME_PATTERN.test(name)) {
    return { ok: false, errors: [{ field: "--name", detail: "the schema name must match ^[A-Za-z0-9_-]{1,64}$" }] };
  }
  const envelopeText = isEnvelope ? text : `{"type":"json_schema","json_schema":{"name":${JSON.stringify(name)},"schema":${text}}}`;
  const result = validateResponseFormat(envelopeText);
  if (!result.ok) return result;
  if (result.format.type !== "json_schema") return { ok: false, errors: [{ field: "response_format.type", detail: "must be json_schema" }] };
  return { ok: true, envelopeText, name: result.format.name };
}

export interface ParsedInput {
  /** JSON text of [{line, content} | {line, error}] for chat_public.create_batch. */
  itemsJson: string;
  total: number;
  bad: { line: number; error: string }[];
}

/** Parts of one line: a JSON string, {"prompt": "..."} or {"content": [{"type":"text","text":"..."}]}. */
function contentOf(value: JsonValue): string | undefined {
  if (typeof value === "string") return JSON.stringify([{ type: "text", text: value }]);
  if (!isJsonObjectValue(value)) return undefined;
  const keys = [...value.keys()];
  if (keys.length !== 1) return undefined;
  const prompt = value.get("prompt");
  if (typeof prompt === "string") return JSON.stringify([{ type: "text", text: prompt }]);
  const content = value.get("content");
  if (!Array.isArray(content) || content.length === 0) return undefined;
  const textParts = content.every((part) => isJsonObjectValue(part) && part.size === 2 && part.get("type") === "text"
    && typeof part.get("text") === "string");
  return textParts ? compactJson(content) : undefined;
}

/** Every non-blank line goes through the JSON safety boundary; a bad line is reported by number and fails alone. */
export function parseBatchInput(text: string): ParsedInput {
  const parts: string[] = [];
  const bad: { line: number; error: string }[] = [];
  const rows = text.split("\n");
  rows.forEach((raw, index) => {
    const line = index + 1;
    const source = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (source.trim() === "") return;
    const parsed = parseJsonSafe(source);
    let error: string | undefined;
    let content: string | undefined;
    if (!parsed.ok) error = `line ${line}: ${parsed.error.rule}: ${parsed.error.message}`;
    else {
      content = contentOf(parsed.value);
      if (content == null) error = `line ${line}: expected a JSON string, {"prompt": "..."} or {"content": [{"type": "text", "text": "..."}]}`;
    }
    if (error != null) {
      bad.push({ line, error });
      parts.push(`{"line":${line},"error":${JSON.stringify(error)}}`);
    } else {
      parts.push(`{"line":${line},"content":${content}}`);
    }
  });
  return { itemsJson: `[${parts.join(",")}]`, total: parts.length, bad };
}

/** Resubmitting the same schema, file and options yields the same key, so the batch is not created twice. */
export function submissionKey(envelopeText: string, inputText: string, options: object): string {
  return `cli:${createHash("sha256").update(envelopeText).update("\0").update(inputText).update("\0")
    .update(JSON.stringify(options)).digest("hex")}`;
}

export interface ResultRow {
  line: number;
  request_id: string | null;
  status: string;
  value_json: string | null;
  error_code: string | null;
  error_message: string | null;
}

const RESULTS_SQL = `
  select i.line, i.structured_output_request_id as request_id, i.status::text,
         case when m.structured_output ->> 'status' = 'succeeded' then (m.structured_output -> 'value')::text end as value_json,
         i.error_code, i.error_message
  from chat_public.batch_items i
  left join chat_public.structured_output_requests r on r.id = i.structured_output_request_id
  left join chat_public.chat_messages m on m.id = r.receipt_message_id
  where i.batch_id = $1 and i.line > $2
  order by i.line limit $3`;

const CSV_COLUMNS = ["line", "request_id", "status", "value_json", "error_code", "error_message"] as const;

function csvField(value: string | number | null): string {
  if (value == null) return "";
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** jsonl: one object per item with `value_json` as text (and `value` as the raw JSON, spliced in unchanged). */
function jsonlLine(row: ResultRow): string {
  return `{"line":${row.line},"request_id":${JSON.stringify(row.request_id)},"status":${JSON.stringify(row.status)},` +
    `"value":${row.value_json ?? "null"},"value_json":${JSON.stringify(row.value_json)},` +
    `"error_code":${JSON.stringify(row.error_code)},"error_message":${JSON.stringify(row.error_message)}}\n`;
}

async function write(out: Writable, chunk: string): Promise<void> {
  if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
}

/** Streams every item's result in line order, in pages (memory stays flat for 100,000 items). */
export async function writeResults(client: pg.ClientBase, batchId: string, format: "jsonl" | "csv", out: Writable,
  pageSize = 1000): Promise<number> {
  let after = 0;
  let written = 0;
  if (format === "csv") await write(out, `${CSV_COLUMNS.join(",")}\n`);
  for (;;) {
    const { rows } = await client.query<ResultRow>(RESULTS_SQL, [batchId, after, pageSize]);
    for (const row of rows) {
      await write(out, format === "csv" ? `${CSV_COLUMNS.map((c) => csvField(row[c])).join(",")}\n` : jsonlLine(row));
    }
    written += rows.length;
    if (rows.length < pageSize) return written;
    after = rows.at(-1)!.line;
  }
}
