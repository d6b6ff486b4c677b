// The value byte cap on what is stored, end to end (scripted provider, not a real model; real worker and
// PostgreSQL): a value whose stored text is exactly 256 KiB succeeds and valueJson returns exactly that many bytes;
// one byte more is refused with feedback the model can act on, although the text sent was ~21 KB.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, fastSettings, makeWorkspaces, startTestWorker, waitFor, waitForStatus } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import { VALUE_MAX_BYTES } from "../../src/structured/index.ts";

let db: TestDatabase;
let worker: RunningWorker;
let user: string;

test.before(async () => {
  db = await createTestDatabase();
  await fastSettings(db);
  await setStructuredExperiment(db, true);
  worker = await startTestWorker(db, await makeWorkspaces());
  user = await createUser(db, "stored-caps");
});
test.after(async () => {
  await worker.stop();
  await db.drop();
});

/** 4,161 numbers of 61 or 62 digits as stored (1e60 / 1e61), ", " between: 262,143 + `long` bytes stored. */
const numbers = (long: number): string =>
  `[${[...Array<string>(long).fill("1e61"), ...Array<string>(4161 - long).fill("1e60")].join(",")}]`;
const finalize = (value: string) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":${value}}` }] });

async function run(steps: object[]): Promise<{ status: string; bytes: number | null; attempts: number; feedback: string[] }> {
  const chat = await createWorkerChat(db, user, JSON.stringify({ script: steps }), { responseFormat: structured("numbers", { type: "array" }) });
  await waitFor("the receipt", async () => (await db.pool.query(
    "select 1 from chat_public.structured_output_requests where chat_id = $1 and status <> 'pending'", [chat])).rows.length > 0 || undefined);
  await waitForStatus(db, chat, "waiting");
  const { rows } = await db.pool.query<{ status: string; bytes: number | null; attempts: number }>(
    `select r.status::text, octet_length((m.structured_output -> 'value')::text) as bytes, r.finalization_attempts as attempts
     from chat_public.structured_output_requests r join chat_public.chat_messages m on m.id = r.receipt_message_id where r.chat_id = $1`, [chat]);
  const tool = await db.pool.query<{ message: string }>(
    `select e -> 'result' -> 'errors' -> 0 ->> 'message' as message from chat_public.chat_messages m, jsonb_array_elements(m.content) e
     where m.chat_id = $1 and m.role = 'tool' and e ->> 'tool_name' = 'coder_structured_output' and e -> 'result' ? 'errors'
     order by m.id`, [chat]);
  return { ...rows[0]!, feedback: tool.rows.map((r) => r.message) };
}

test("stored text of exactly 256 KiB: succeeded, and valueJson is exactly 262,144 bytes", async () => {
  assert.equal(await run([finalize(numbers(1))]), { status: "succeeded", bytes: VALUE_MAX_BYTES, attempts: 1, feedback: [] });
});

test("one byte more as stored is refused with the stored size in the feedback; the repair succeeds", async () => {
  const result = await run([finalize(numbers(2)), finalize("[1]")]);
  assert.equal({ ...result, feedback: result.feedback.map((f) => f.slice(0, 64)) },
    { status: "succeeded", bytes: 3, attempts: 2, feedback: ["max-bytes: the value is 262145 bytes as stored, more than 262144"] });
});

test.run();
