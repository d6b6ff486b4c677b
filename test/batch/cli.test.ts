// The batch CLI's paths (src/cli/batch-command.ts, batch-io.ts) against a real database, plus the SQL path's
// schema check in the worker: validation before anything runs, bad lines by number, idempotent resubmission,
// results byte-exact against the receipts (big numbers included), status text and NOTIFY-driven wait.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { count, createUser, setStructuredExperiment } from "../support/chats.ts";
import { tempFolder } from "../support/temp.ts";
import { makeWorkspaces, startTestWorker, waitFor } from "../support/worker.ts";
import { formatStatus, readProgress, submitBatch, waitForBatch } from "../../src/cli/batch-command.ts";
import { loadBatchSchema, parseBatchInput, writeResults } from "../../src/cli/batch-io.ts";
import { schemaVerdict } from "../../worker/batch-tasks.ts";
import { batch, endItem, envelope, items, lines, validated } from "./helpers.ts";

let db: TestDatabase;
let dir: string;

test.before(async () => {
  db = await createTestDatabase();
  await setStructuredExperiment(db, true);
  await createUser(db, "carol");
  dir = await tempFolder("chatd-batch-");
});
test.after(async () => {
  await db.drop();
});

async function files(schema: string, input: string): Promise<{ schema: string; input: string }> {
  const name = Math.random().toString(36).slice(2);
  await writeFile(join(dir, `${name}.json`), schema);
  await writeFile(join(dir, `${name}.jsonl`), input);
  return { schema: join(dir, `${name}.json`), input: join(dir, `${name}.jsonl`) };
}

const client = () => db.pool as never;

test("an invalid schema is refused before anything is stored (CLI path)", async () => {
  for (const schema of ['{"type": "object", "$ref": "#/x"}', '{"type": "string", "pattern": "(a"}', '{"type": "object",}', '{"a": 1, "a": 2}']) {
    const f = await files(schema, '"hello"\n');
    const result = await submitBatch(client(), { user: "carol", ...f, concurrency: 2 });
    assert.is(result.ok, false, schema);
  }
  assert.is(await count(db, "select 1 from chat_public.batches"), 0);
});

test("bad lines are reported by number and fail alone; resubmitting the same file returns the same batch", async () => {
  const input = ['"first"', "", '{"prompt": "second"}', "{not json", '{"content": [{"type": "text", "text": "third"}]}',
    '{"prompt": 1}', '{"a": 1, "a": 2}', "[1e999]"].join("\n");
  const parsed = parseBatchInput(input);
  assert.equal(parsed.bad.map((b) => b.line), [4, 6, 7, 8]);
  assert.is(parsed.total, 7);
  const f = await files(JSON.stringify({ type: "object" }), input);
  const first = await submitBatch(client(), { user: "carol", ...f, concurrency: 2, name: "lines" });
  assert.ok(first.ok);
  if (!first.ok) return;
  assert.is(first.existing, false);
  const again = await submitBatch(client(), { user: "carol", ...f, concurrency: 2, name: "lines" });
  assert.ok(again.ok && again.batchId === first.batchId && again.existing);
  assert.is(await count(db, "select 1 from chat_public.batches"), 1);
  const rows = await items(db, first.batchId);
  assert.equal(rows.map((i) => [i.line, i.status]), [
    [1, "pending"], [3, "pending"], [4, "failed"], [5, "pending"], [6, "failed"], [7, "failed"], [8, "failed"]]);
  assert.match(rows[2]!.error_message!, /^line 4: /);
  assert.is(rows[2]!.error_code, "invalid_line");
});

test("the worker's verdict: src/structured rejects what the SQL envelope check lets through (SQL path)", async () => {
  assert.is(schemaVerdict('{"name": "ok", "schema": {"type": "object"}}'), null);
  assert.match(schemaVerdict('{"name": "bad", "schema": {"type": "object", "$ref": "#/definitions/x"}}')!, /json_schema\.schema/);
  const workers = await startTestWorker(db, await makeWorkspaces());
  try {
    const { rows: [owner] } = await db.pool.query("select id from chat_public.users where name = 'carol'");
    const { rows } = await db.as("chat_operator", null, (c) => c.query(
      "select (chat_private.operator_create_batch($1, $2, $3)).id", [owner.id,
        envelope({ type: "string", pattern: "(unclosed" }), JSON.stringify(lines(3))]), true);
    const id = rows[0].id as string;
    await waitFor("the verdict", async () => (await batch(db, id)).status !== "validating" || undefined);
    const failed = await batch(db, id);
    assert.is(failed.status, "failed");
    assert.match(failed.error!, /^invalid response_format: response_format\.json_schema\.schema/);
    assert.is(await count(db, "select 1 from chat_public.batch_items where batch_id = $1 and chat_id is not null", [id]), 0);
  } finally {
    await workers.stop();
  }
});

test("results: value_json byte-exact with the receipts (big numbers), errors with codes; jsonl and csv", async () => {
  const f = await files(JSON.stringify({}), ['"a"', '"b"', '"c"'].join("\n"));
  const submitted = await submitBatch(client(), { user: "carol", ...f, concurrency: 3, name: "exact" });
  assert.ok(submitted.ok);
  if (!submitted.ok) return;
  await validated(db, submitted.batchId);
  const rows = await items(db, submitted.batchId);
  const big = '{"n": 123456789012345678901234567890.123456789012345678901, "s": "line, \\"quoted\\"\\nnext", "tiny": -0.000000000000000000000001}';
  await endItem(db, rows[0]!.chat_id!, { valueJson: big });
  await endItem(db, rows[1]!.chat_id!, { valueJson: "null" });
  await endItem(db, rows[2]!.chat_id!, { code: "validation_exhausted" });
  const collect = async (format: "jsonl" | "csv") => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    await writeResults(client(), submitted.batchId, format, out, 2);
    return text;
  };
  const jsonl = (await collect("jsonl")).trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  const { rows: stored } = await db.pool.query<{ v: string }>(
    `select (m.structured_output -> 'value')::text as v from chat_public.batch_items i
     join chat_public.structured_output_requests r on r.id = i.structured_output_request_id
     join chat_public.chat_messages m on m.id = r.receipt_message_id where i.batch_id = $1 and i.line = 1`, [submitted.batchId]);
  assert.is(jsonl[0]!.value_json, stored[0]!.v);
  assert.ok(String(jsonl[0]!.value_json).includes("123456789012345678901234567890.123456789012345678901"));
  assert.ok(String(jsonl[0]!.value_json).includes("-0.000000000000000000000001"));
  assert.equal(jsonl.map((r) => [r.line, r.status, r.value_json, r.error_code]), [
    [1, "succeeded", stored[0]!.v, null], [2, "succeeded", "null", null], [3, "failed", null, "validation_exhausted"]]);
  assert.is(jsonl[0]!.request_id, rows[0]!.request_id);
  const csv = await collect("csv");
  const header = csv.split("\n")[0];
  assert.is(header, "line,request_id,status,value_json,error_code,error_message");
  assert.ok(csv.includes(`"${stored[0]!.v.replaceAll('"', '""')}"`), "the value is one quoted CSV field");
  assert.match(csv, /\n3,[0-9a-f-]{36},failed,,validation_exhausted,failed: validation_exhausted\n$/);
  const progress = await readProgress(client(), submitted.batchId);
  assert.match(formatStatus(submitted.batchId, progress!), /items 3: pending 0, running 0, succeeded 2, failed 1, canceled 0\ncodes: failed\/validation_exhausted 1/);
});

test("wait follows NOTIFY to the end and prints plain progress lines off a terminal", async () => {
  const valid = loadBatchSchema('{"type": "object"}', "w");
  assert.ok(valid.ok);
  const f = await files('{"type": "object"}', ['"x"', '"y"'].join("\n"));
  const submitted = await submitBatch(client(), { user: "carol", ...f, concurrency: 1 });
  if (!submitted.ok) throw new Error("submit failed");
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const waiting = waitForBatch(db.url, submitted.batchId, out);
  await validated(db, submitted.batchId);
  for (let line = 1; line <= 2; line++) {
    const item = await waitFor("the next item", async () => (await items(db, submitted.batchId)).find((i) => i.status === "running"));
    await endItem(db, item.chat_id!, { valueJson: `{"line": ${line}}` });
  }
  const final = await waiting;
  assert.is(final?.status, "completed");
  assert.match(text.trimEnd().split("\n").at(-1)!, /^2\/2 done \(running 0, succeeded 2, failed 0, canceled 0\)/);
});

test.run();
