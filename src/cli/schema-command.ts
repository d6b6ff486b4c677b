// `chatd schema check|validate`: the structured-output validator for people who write schemas and
// run batches. The command logic takes streams so it can be tested without spawning a process.

import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Command } from "commander";
import { readUserFile, userFileStream } from "./user-files.ts";
import {
  compileSchema,
  ENVELOPE_LIMITS,
  isJsonObjectValue,
  limitError,
  parseJsonSafe,
  VALUE_INPUT_MAX_BYTES,
  checkParsed,
  checkValue,
  validateResponseFormat,
  VALUE_LIMITS,
  SCHEMA_MAX_BRANCHES,
  SCHEMA_MAX_BYTES,
  SCHEMA_MAX_DEPTH,
  SCHEMA_MAX_NODES,
  SCHEMA_MAX_PATTERNS,
  type CompiledSchema,
} from "../structured/index.ts";

type Loaded = { ok: true; validator: CompiledSchema; kind: "envelope" | "schema"; name?: string } | { ok: false; errors: { field: string; detail: string }[] };

/** A bare JSON Schema document, or an envelope when it says "type":"json_schema". */
export function loadSchema(input: string | Uint8Array): Loaded {
  const parsed = parseJsonSafe(input, ENVELOPE_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    return { ok: false, errors: [{ field: pointer, detail: `${rule}: ${message}` }] };
  }
  const v = parsed.value;
  if (isJsonObjectValue(v) && v.get("type") === "json_schema") {
    const r = validateResponseFormat(input);
    if (!r.ok) return r;
    if (r.format.type !== "json_schema") return { ok: false, errors: [{ field: "response_format", detail: "not a json_schema envelope" }] };
    const c = compileSchema(r.format.schema);
    if (!c.ok) return c;
    return { ok: true, validator: c.validator, kind: "envelope", name: r.format.name };
  }
  const c = compileSchema(v);
  if (!c.ok) return { ok: false, errors: c.errors.map((e) => ({ field: e.field === "" ? "(root)" : e.field, detail: e.detail })) };
  return { ok: true, validator: c.validator, kind: "schema" };
}

function writeLine(out: Writable, line: string): void {
  out.write(`${line}\n`);
}

/** Exit code 0 with a one-line summary, or 1 with one line per field error. */
export function runSchemaCheck(input: string | Uint8Array, out: Writable, err: Writable): number {
  const r = loadSchema(input);
  if (!r.ok) {
    for (const e of r.errors) writeLine(err, `${e.field}: ${e.detail}`);
    return 1;
  }
  const bytes = Buffer.byteLength(r.validator.schemaText, "utf8");
  const what = r.kind === "envelope" ? `response_format envelope "${r.name ?? ""}"` : "JSON Schema document";
  writeLine(out, `ok: ${what}, ${bytes} bytes canonical, sha256 ${r.validator.sha256}`);
  for (const line of sizeLines(r.validator, bytes)) writeLine(out, line);
  return 0;
}

/** Each cap beside the schema's size as written and as validation reaches it through `$ref`s. */
function sizeLines(v: CompiledSchema, bytes: number): string[] {
  const { written, expanded } = v.size;
  const row = (what: string, w: number, e: number, cap: number, extra = ""): string =>
    `  ${what.padEnd(9)} ${String(w).padStart(6)} written, ${String(e).padStart(6)} through $ref${extra}   (cap ${cap})`;
  return [
    `  bytes     ${String(bytes).padStart(6)} canonical   (cap ${SCHEMA_MAX_BYTES})`,
    row("nodes", written.nodes, expanded.nodes, SCHEMA_MAX_NODES, `, ${expanded.perValueNode} per value node`),
    row("branches", written.branches, expanded.branches, SCHEMA_MAX_BRANCHES),
    row("patterns", written.patterns, expanded.patterns, SCHEMA_MAX_PATTERNS),
    row("depth", written.depth, expanded.depth, SCHEMA_MAX_DEPTH),
  ];
}

function lines(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}

/** One verdict line per non-empty input line; exit 1 when any value is invalid. */
export async function runSchemaValidate(schemaInput: string | Uint8Array, values: Readable, out: Writable, err: Writable): Promise<number> {
  const loaded = loadSchema(schemaInput);
  if (!loaded.ok) {
    for (const e of loaded.errors) writeLine(err, `${e.field}: ${e.detail}`);
    return 2;
  }
  let n = 0;
  let failed = false;
  for await (const line of lines(values)) {
    n++;
    if (line.trim() === "") continue;
    const r = checkValue(loaded.validator, line);
    if (r.ok) writeLine(out, JSON.stringify({ line: n, ok: true }));
    else {
      failed = true;
      writeLine(out, JSON.stringify({ line: n, ok: false, errors: r.errors }));
    }
  }
  return failed ? 1 : 0;
}

const JSONL_LIMITS = {
  maxBytes: ENVELOPE_LIMITS.maxBytes + VALUE_INPUT_MAX_BYTES + 1024,
  maxDepth: Math.max(ENVELOPE_LIMITS.maxDepth, 66),
  maxNodes: ENVELOPE_LIMITS.maxNodes + 16_384 + 4,
};

type JsonlVerdict =
  | { ok: true }
  | { ok: false; schema_errors: { field: string; detail: string }[] }
  | { ok: false; errors: { pointer: string; message: string }[] };

/**
 * What a `--jsonl` run remembers between lines: the text that opened the last line whose schema
 * compiled, `{"schema":S,"value":`, and the validator compiled from S. A JSONL file nearly always
 * repeats one schema on every line; a line that opens with exactly that text then has only its
 * value parsed (validateJsonlLine says why the verdict is the same). One per run, never shared.
 */
export interface JsonlMemo {
  opening?: string;
  validator?: CompiledSchema;
  /** Lines whose schema text was recognised (for the tests and the bench). */
  hits: number;
}

export function newJsonlMemo(): JsonlMemo {
  return { hits: 0 };
}

const SCHEMA_OPENING = '{"schema":';
const VALUE_KEY = ',"value":';
// Candidate ends of S tried when remembering a line (S may itself contain `,"value":`): bounds the
// cost of remembering a hostile line to a few parses of it.
const OPENING_CANDIDATES = 8;
// The value's own caps, with the line's byte bound (the value's size is checked as stored).
const VALUE_IN_LINE_LIMITS = { maxBytes: JSONL_LIMITS.maxBytes, maxDepth: VALUE_LIMITS.maxDepth, maxNodes: VALUE_LIMITS.maxNodes };

/**
 * The text to parse, as UTF-8 bytes when that is lossless (no lone surrogate). readline hands out
 * each line as a slice of the chunk it came in (a V8 sliced string), on which every charCodeAt
 * costs an indirection: the boundary parses such a line ~1.5x slower than the same text decoded
 * afresh from bytes (4,094 numbers: 155 -> 106 us, encoding included). A lone surrogate would be
 * replaced by the encoding, so such a text is parsed as it is (the boundary rejects it), as is a
 * text too long for any line (the boundary's byte cap rejects it). The bytes go to one scratch
 * buffer, reused: the parse decodes them before it returns (a fresh 30 KB buffer per line made
 * the GC's share of a line double).
 */
let scratch = Buffer.alloc(0);
function flatInput(text: string): string | Uint8Array {
  const room = text.length * 3;
  if (room > 3 * JSONL_LIMITS.maxBytes || !text.isWellFormed()) return text;
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, 64 * 1024));
  return scratch.subarray(0, scratch.write(text, 0, "utf8"));
}

function isJsonWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The verdict of a line that opens with the memo's `{"schema":S,"value":`, from its value alone, or
 * undefined when the line does not qualify or its value has any problem (the whole line then takes
 * the full path, so every error is the full path's, pointers and offsets included). Same verdict:
 * S parsed alone as one complete JSON object, so inside this line the parser reads the same S and
 * ends it at the same character; if V then parses alone, followed by `}` and whitespace, the line
 * is exactly {"schema": S, "value": V}. S was within the schema caps and V is parsed here within the
 * value's, so the line is within the line's caps, limitError finds nothing, and compileSchema(S)
 * is the validator remembered.
 */
function memoVerdict(line: string, memo: JsonlMemo): JsonlVerdict | undefined {
  const { opening, validator } = memo;
  if (opening === undefined || validator === undefined || !line.startsWith(opening)) return undefined;
  if (line.length * 3 > JSONL_LIMITS.maxBytes && Buffer.byteLength(line, "utf8") > JSONL_LIMITS.maxBytes) return undefined;
  let end = line.length;
  while (end > opening.length && isJsonWs(line.charCodeAt(end - 1))) end--;
  if (line.charCodeAt(end - 1) !== 0x7d) return undefined;
  const parsed = parseJsonSafe(flatInput(line.slice(opening.length, end - 1)), VALUE_IN_LINE_LIMITS);
  if (!parsed.ok) return undefined;
  memo.hits++;
  const r = checkParsed(validator, parsed.value);
  return r.ok ? { ok: true } : { ok: false, errors: r.errors };
}

/**
 * Remembers how `line` opens, when its schema text can be told apart (see memoVerdict); the
 * validator either way, so that the next lines of the same schema do not search again.
 */
function remember(line: string, validator: CompiledSchema, memo: JsonlMemo): void {
  memo.validator = validator;
  memo.opening = undefined;
  if (!line.startsWith(SCHEMA_OPENING)) return;
  let at = SCHEMA_OPENING.length;
  for (let i = 0; i < OPENING_CANDIDATES; i++) {
    const end = line.indexOf(VALUE_KEY, at);
    if (end < 0) return;
    if (parseJsonSafe(line.slice(SCHEMA_OPENING.length, end), JSONL_LIMITS).ok) {
      memo.opening = line.slice(0, end + VALUE_KEY.length);
      return;
    }
    at = end + 1;
  }
}

/**
 * One `{"schema": S, "value": V}` line to a verdict. The line passes the JSON boundary as a whole
 * (so a duplicate key inside V is reported as a value error at its pointer); the value's depth and
 * node caps are then checked on V alone (limitError gives the errors a parse of V's text would), and
 * V is validated as parsed: no second serialization and parse. With a memo (one per run), a line
 * that repeats the previous schema's text has only V parsed (memoVerdict).
 */
export function validateJsonlLine(line: string, memo?: JsonlMemo): JsonlVerdict {
  if (memo !== undefined) {
    const quick = memoVerdict(line, memo);
    if (quick !== undefined) return quick;
  }
  const parsed = parseJsonSafe(flatInput(line), JSONL_LIMITS);
  if (!parsed.ok) {
    const { pointer, rule, message } = parsed.error;
    if (pointer === "/schema" || pointer.startsWith("/schema/")) {
      return { ok: false, schema_errors: [{ field: pointer.slice("/schema".length), detail: `${rule}: ${message}` }] };
    }
    if (pointer === "/value" || pointer.startsWith("/value/")) {
      // The line's own depth and node limits are larger than the value's: name the value's caps.
      const capMessage = rule === "max-depth" ? `nesting deeper than ${VALUE_LIMITS.maxDepth}`
        : rule === "max-nodes" ? `more than ${VALUE_LIMITS.maxNodes} nodes` : message;
      return { ok: false, errors: [{ pointer: pointer.slice("/value".length), message: `${rule}: ${capMessage}` }] };
    }
    return { ok: false, errors: [{ pointer: "", message: `invalid line: ${rule}: ${message}` }] };
  }
  const obj = parsed.value;
  if (!isJsonObjectValue(obj) || !obj.has("schema") || !obj.has("value") || obj.size !== 2) {
    return { ok: false, errors: [{ pointer: "", message: 'invalid line: expected exactly {"schema": ..., "value": ...}' }] };
  }
  const schema = obj.get("schema") ?? null;
  const c = compileSchema(schema);
  if (!c.ok) return { ok: false, schema_errors: c.errors };
  if (memo !== undefined && memo.validator !== c.validator) remember(line, c.validator, memo);
  const value = obj.get("value") ?? null;
  const capped = limitError(value, VALUE_LIMITS);
  if (capped !== undefined) return { ok: false, errors: [{ pointer: capped.pointer, message: `${capped.rule}: ${capped.message}` }] };
  const r = checkParsed(c.validator, value);
  return r.ok ? { ok: true } : { ok: false, errors: r.errors };
}

/** One verdict per non-empty line, numbered like the values mode's (`line` counts empty lines too). */
export async function runSchemaValidateJsonl(input: Readable, out: Writable): Promise<number> {
  let failed = false;
  let n = 0;
  const memo = newJsonlMemo();
  for await (const line of lines(input)) {
    n++;
    if (line.trim() === "") continue;
    const verdict = validateJsonlLine(line, memo);
    if (!verdict.ok) failed = true;
    writeLine(out, JSON.stringify({ line: n, ...verdict }));
  }
  return failed ? 1 : 0;
}

async function readInput(file: string): Promise<Uint8Array> {
  if (file !== "-") return readUserFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function openLines(file: string | undefined): Promise<Readable> {
  if (file === undefined || file === "-") return process.stdin;
  return userFileStream(file);
}

export function registerSchemaCommand(program: Command): void {
  const schema = program.command("schema").description("check JSON Schemas and validate values the way chatd does");
  schema
    .command("check")
    .description("check a JSON Schema document (or a json_schema response_format envelope); - reads stdin")
    .argument("<file>", "schema file, or - for stdin")
    .action(async (file: string) => {
      process.exitCode = runSchemaCheck(await readInput(file), process.stdout, process.stderr);
    });
  schema
    .command("validate")
    .description("validate JSON values, one per line, against a schema; with --jsonl read {schema, value} lines")
    .argument("[schemaFile]", "schema file (without --jsonl), or the JSONL input (with --jsonl)")
    .argument("[values]", "values file with one JSON value per line, or - for stdin (default)")
    .option("--jsonl", 'read lines {"schema": S, "value": V} and write one verdict per line')
    .action(async (schemaFile: string | undefined, values: string | undefined, opts: { jsonl?: boolean }) => {
      if (opts.jsonl === true) {
        process.exitCode = await runSchemaValidateJsonl(await openLines(schemaFile), process.stdout);
        return;
      }
      if (schemaFile === undefined) {
        process.stderr.write("schema validate: SCHEMA_FILE is required without --jsonl\n");
        process.exitCode = 2;
        return;
      }
      process.exitCode = await runSchemaValidate(await readInput(schemaFile), await openLines(values), process.stdout, process.stderr);
    });
}
