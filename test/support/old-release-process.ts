// Release 5823e57's API or worker as a process of its own, for the rolling-deploy test (test/migrate/rolling.test.ts): the
// SQL that release's code sends, statement for statement (the same texts, the same named statements, the same
// role switch), since its TypeScript is not part of this checkout (test/fixtures/release-5823e57 holds its
// migrations and sql/ only). What it does is printed on stderr as JSON lines, which the test reads as barriers:
//
//   node old-release-process.ts worker <concurrency>   Graphile Worker with release 5823e57's chat_run task: takes the
//     lease and reads the turn state in one statement, reads its settings, heartbeats, then commits a structured
//     step and finishes the turn in one statement (worker/loop/*.ts of that release). The scripted model answers
//     after a delay of 0-40 ms, so leases are held while the migration runs. Its lease sweep runs every 500 ms.
//   node old-release-process.ts api <concurrency> <user id>...   clients, each request a transaction as chat_user
//     (as PostGraphile ran them for that release): create_chat with a structured request and an idempotency key,
//     send_chat_message with a second one (queued while the first turn runs), then the chat read back.
//
// SIGTERM stops it as that release stopped: the API stops taking requests and ends the ones it is in; the worker
// abandons nothing (each job here is short) and stops its runner. Exit 0 then; any error is an `error` line.
import pg from "pg";
import { Logger, run, type Task } from "graphile-worker";

const [mode, concurrencyArg, ...rest] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const databaseUrl = process.env.DATABASE_URL!;
const emit = (event: string, fields: Record<string, unknown> = {}) => process.stderr.write(`${JSON.stringify({ event, ...fields })}\n`);
const codeOf = (error: unknown) => (error as { code?: string }).code ?? "none";
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

const pool = new pg.Pool({ connectionString: databaseUrl, max: concurrency * 3 + 4 });
// As that release's createPool (src/db/pool.ts): a connection that fails is reported, never thrown.
pool.on("connect", (client) => client.on("error", (error) => emit("error", { where: "connection", code: codeOf(error), message: messageOf(error) })));
pool.on("error", (error) => emit("error", { where: "pool", code: codeOf(error), message: messageOf(error) }));
let stopping = false;

/** acquire_lease outcomes that meant "another runner has it, or there is nothing to run" (worker/loop/lease.ts). */
const NOTHING_TO_RUN = new Set(["CHLSD", "CHTRN", "CHARC", "CHNTF"]);
const SETTINGS = ["lease_seconds", "max_steps_per_turn", "retry_max_attempts", "retry_initial_delay_ms",
  "retry_max_delay_ms", "finalizer_repairs"];

async function chatRun(chatId: string, workerId: string): Promise<void> {
  for (;;) {
    if (stopping) return;
    const started = performance.now();
    let row: { runner_id: string; history_version: string; generation_attempt: string; state: { chat: unknown } };
    try {
      row = (await pool.query({ name: "chatd_acquire_lease",
        text: "select f.*, chat_private.turn_state($1) as state from chat_private.acquire_lease($1, $2) f", values: [chatId, workerId] })).rows[0];
    } catch (error) {
      if (NOTHING_TO_RUN.has(codeOf(error))) {
        emit("nothing", { chat: chatId, code: codeOf(error) });
        return;
      }
      throw Object.assign(error as Error, { step: "acquire_lease" });
    }
    // That release's turnStateFrom: a state without its chat was CHNTF, which its acquireLease took for "nothing to
    // run", leaving the lease it had just taken to expire (a recovery). Reported here: it must never happen.
    if (row.state.chat == null) throw Object.assign(new Error("turn_state returned no chat after acquire_lease"), { code: "CHNTF", step: "turn_state" });
    const fence = [chatId, row.runner_id, row.history_version, row.generation_attempt];
    emit("leased", { chat: chatId });
    await step("settings", () => pool.query(`select v.version::text as config_version, s.name, s.value
       from chat_private.worker_config_version v left join chat_private.settings s on s.name = any($1) where v.id`, [SETTINGS]));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 40)); // the model streams its answer
    await step("heartbeat", () => pool.query(`select chat_private.renew_lease($1, $2, $3) as renewed, c.status::text as status, c.history_version
       from chat_public.chats c where c.id = $1`, [chatId, row.runner_id, 30]));
    const call = { type: "tool-call", tool_call_id: "f1", tool_name: "coder_structured_output", args: { output: { n: 1 } } };
    const accepted = { type: "tool-result", tool_call_id: "f1", tool_name: "coder_structured_output", result: { accepted: true },
      is_error: false, provider_executed: false };
    const messages = JSON.stringify([{ role: "assistant", content: [call] }, { role: "tool", content: [accepted] }]);
    const result = await step("commit_step_and_finish_turn", () => pool.query<{ status: string | null }>({
      name: "chatd_commit_step_and_finish_turn",
      text: "select * from chat_private.commit_step_and_finish_turn($1, $2, $3, $4, $5, $6, $7, $8)",
      values: [...fence, messages, '{"steps":1,"candidate":{"value":{"n": 1},"step":1,"message_index":0}}', null, null] }));
    emit("finished", { chat: chatId, status: result.rows[0]!.status, ms: Math.round(performance.now() - started) });
    if (result.rows[0]!.status !== "running") return;
  }
}

async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw Object.assign(error as Error, { step: name });
  }
}

async function worker(): Promise<void> {
  const workerId = `old-worker-${process.pid}`;
  const chatRunTask: Task = async (payload) => {
    const chatId = (payload as { chat_id?: unknown }).chat_id;
    if (typeof chatId !== "string") return;
    try {
      await chatRun(chatId, workerId);
    } catch (error) {
      emit("error", { where: (error as { step?: string }).step ?? "chat_run", code: codeOf(error), message: messageOf(error), chat: chatId });
    }
  };
  const idle: Task = async () => undefined;
  const logger = new Logger(() => (level, message) => {
    if (level === "error") emit("error", { where: "graphile-worker", code: "none", message });
  });
  const runner = await run({
    pgPool: pool, concurrency, noHandleSignals: true, pollInterval: 1000, logger, parsedCronItems: [],
    preset: { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0 } },
    taskList: { chat_run: chatRunTask, chat_requires_action_deadline: idle, batch_validate: idle, batch_cancel: idle },
  });
  // That release's lease sweep (every 10 s there; more often here, so that it also runs during the migration).
  const sweep = setInterval(() => void pool.query("select chat_private.sweep_expired_leases() as n")
    .then(({ rows }) => rows[0].n > 0 && emit("swept", { chats: rows[0].n }))
    .catch((error: unknown) => emit("error", { where: "sweep", code: codeOf(error), message: messageOf(error) })), 500);
  emit("ready");
  process.once("SIGTERM", () => {
    stopping = true;
    clearInterval(sweep);
    void runner.stop().then(() => pool.end()).then(() => process.exit(0));
  });
}

async function api(users: string[]): Promise<void> {
  const format = JSON.stringify({ type: "json_schema", json_schema: { name: "report", schema: { type: "object" } } });
  let created = 0;
  const client = async (index: number) => {
    const user = users[index % users.length]!;
    while (!stopping) {
      const connection = await pool.connect();
      // One PostGraphile request: a transaction with the user's role and claims around one statement.
      const asUser = async <T extends pg.QueryResultRow>(text: string, values: unknown[]) => {
        await connection.query("begin");
        await connection.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
        const { rows } = await connection.query<T>(text, values);
        await connection.query("commit");
        return rows;
      };
      const content = (text: string) => JSON.stringify([{ type: "text", text }]);
      try {
        // A structured request with an idempotency key, then a second one on the same chat, queued behind the
        // first's turn when it still runs (the worker then promotes it), and the chat read back.
        const chatId = (await asUser<{ chat_id: string }>(
          "select * from chat_public.create_chat(content => $1, response_format => $2, idempotency_key => $3)",
          [content(`request ${created}`), format, `create-${process.pid}-${index}-${created}`]))[0]!.chat_id;
        await asUser("select * from chat_public.send_chat_message($1, $2, $3, 'queue', null)", [chatId, content("and then"), format]);
        await asUser("select id, status from chat_public.chats where id = $1", [chatId]);
        await asUser("select id, kind from chat_public.chat_messages where chat_id = $1 order by id", [chatId]);
        created += 1;
        emit("created", { chat: chatId, n: created });
      } catch (error) {
        await connection.query("rollback").catch(() => undefined);
        emit("error", { where: "api", code: codeOf(error), message: messageOf(error) });
      } finally {
        connection.release();
      }
    }
  };
  const clients = Array.from({ length: concurrency }, (_, index) => client(index));
  emit("ready");
  process.once("SIGTERM", () => {
    stopping = true;
    void Promise.all(clients).then(() => pool.end()).then(() => process.exit(0));
  });
}

if (mode === "worker") await worker();
else if (mode === "api") await api(rest);
else throw new Error(`usage: old-release-process.ts worker|api <concurrency> [user ids]`);
