// Nothing is stranded (scripted provider, deterministic; real worker processes): one chat with 20 structured
// requests, one of them exhausting its repairs and one crashing its worker every time. The crashing turn fails
// after max_recoveries_per_turn: the chat enters error, and the structured requests queued behind it get failed
// receipts at once (docs/workers.md); the client's next message runs; in the end no request is pending and each has
// exactly one receipt.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createUser, sendMessage, setStructuredExperiment, structured } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createWorkerChat, makeWorkspaces, setSetting, spawnWorkerProcess, waitFor } from "../support/worker.ts";

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  await setSetting(db, "lease_seconds", 2);
  await setSetting(db, "max_recoveries_per_turn", 1);
  await setStructuredExperiment(db, true);
});
test.after(async () => {
  await db.drop();
});

const script = (steps: object[]) => JSON.stringify({ script: steps });
const finalize = (n: number) => ({ tool_calls: [{ name: "coder_structured_output", args: { output: { n } } }] });

async function pending(chatId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    "select count(*)::int as n from chat_public.structured_output_requests where chat_id = $1 and status = 'pending'", [chatId]);
  return rows[0]!.n;
}

async function status(chatId: string): Promise<string> {
  const { rows } = await db.pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [chatId]);
  return rows[0]!.status;
}

test("20 queued structured requests, one exhausting its repairs, one crashing every worker: all end", async () => {
  const user = await createUser(db, "stranded");
  const root = await makeWorkspaces();
  // Only request 10 uses a workspace tool, so the fault point during_tool_execution kills exactly its turns.
  const contents = Array.from({ length: 20 }, (_, i) =>
    i === 6 ? script([{ text: "no" }, { text: "still no" }, { text: "never" }])
      : i === 9 ? script([{ tool_calls: [{ name: "read_file", args: { path: "a.txt" } }] }, finalize(i)])
        : script([finalize(i)]));
  const chat = await createWorkerChat(db, user, contents[0]!, { responseFormat: structured(), workspace: "ws" });
  for (const content of contents.slice(1)) await sendMessage(db, user, chat, content, structured());

  let crashes = 0;
  let resumed = false;
  let worker = spawnWorkerProcess(db, root, { CHATD_FAULTS: "during_tool_execution:exit" });
  try {
    await waitFor("every request to end", async () => {
      if (worker.exitCode != null || worker.signalCode != null) {
        crashes += 1;
        worker = spawnWorkerProcess(db, root, { CHATD_FAULTS: "during_tool_execution:exit" });
      }
      // The crashing turn failed and the chat waits in error: the client's next message runs.
      if (!resumed && (await status(chat)) === "error") {
        resumed = true;
        await sendMessage(db, user, chat, script([{ text: "carry on" }]));
      }
      return ((await pending(chat)) === 0 && (await status(chat)) === "waiting") || undefined;
    }, 90_000);
  } finally {
    worker.kill("SIGTERM");
    await worker.exited;
  }
  assert.ok(crashes >= 2, `the crashing turn killed a worker each time it ran (${crashes})`);
  assert.ok(resumed, "the chat entered error after the recovery bound");
  const { rows } = await db.pool.query<{ status: string; code: string | null; n: number }>(
    `select status::text, error_code as code, count(*)::int as n from chat_public.structured_output_requests
     where chat_id = $1 group by 1, 2 order by 1, 2`, [chat]);
  // Requests 0-8 ran (6 exhausted its repairs), 9 crashed every worker, 10-19 were queued behind it.
  assert.equal(rows, [
    { status: "failed", code: "generation_failed", n: 11 },
    { status: "failed", code: "not_produced", n: 1 },
    { status: "succeeded", code: null, n: 8 },
  ]);
  const { rows: receipts } = await db.pool.query<{ n: number; distinct: number }>(
    `select count(*)::int as n, count(distinct structured_output_request_id)::int as distinct
     from chat_public.chat_messages where chat_id = $1 and kind = 'receipt'`, [chat]);
  assert.equal(receipts[0], { n: 20, distinct: 20 }, "exactly one receipt per request");
});

test.run();
