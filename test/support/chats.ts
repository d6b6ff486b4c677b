// Test helpers that drive chats through the real transition functions, as a user or as a worker.
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export interface Fence {
  chatId: string;
  runnerId: string;
  historyVersion: string;
  generationAttempt: string;
}

export const text = (value: string) => JSON.stringify([{ type: "text", text: value }]);

export const structured = (name = "report", schema: object = { type: "object" }) =>
  JSON.stringify({ type: "json_schema", json_schema: { name, schema } });

export const dynamicTool = (name: string) => ({ name, description: `the ${name} tool`, input_schema: { type: "object" } });

export async function createUser(db: TestDatabase, name: string): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>("insert into chat_public.users (name) values ($1) returning id", [name]);
  return rows[0]!.id;
}

export async function setStructuredExperiment(db: TestDatabase, enabled: boolean): Promise<void> {
  await db.pool.query("update chat_private.experiments set enabled = $1 where name = 'chat-structured-output'", [enabled]);
}

/**
 * The database tests' preamble: a database of the test file's own (from the runner's template), one user named
 * `userName`, and the structured-output experiment on. The caller drops the database in its `test.after`.
 */
export async function chatDatabase(userName: string): Promise<{ db: TestDatabase; user: string }> {
  const db = await createTestDatabase();
  const user = await createUser(db, userName);
  await setStructuredExperiment(db, true);
  return { db, user };
}

export interface InputResult {
  chat_id: string;
  message_id: string | null;
  queued_message_id: string | null;
  structured_output_request_id: string | null;
  receipt_message_ids: string[];
}

/** Runs one client transition as `userId` and commits it. */
export function asUser<T>(db: TestDatabase, userId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return db.as("chat_user", userId, fn, true);
}

export async function createChat(db: TestDatabase, userId: string, content = "hello", responseFormat: string | null = null,
  extra: { dynamicTools?: object[]; planMode?: boolean; idempotencyKey?: string } = {}): Promise<InputResult> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>(
      `select * from chat_public.create_chat(content => $1, response_format => $2, dynamic_tools => $3,
         plan_mode => $4, idempotency_key => $5)`,
      [text(content), responseFormat, JSON.stringify(extra.dynamicTools ?? []), extra.planMode ?? false,
        extra.idempotencyKey ?? null]);
    return rows[0]!;
  });
}

export async function sendMessage(db: TestDatabase, userId: string, chatId: string, content: string,
  responseFormat: string | null = null, busyBehavior = "queue", idempotencyKey: string | null = null): Promise<InputResult> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>(
      "select * from chat_public.send_chat_message($1, $2, $3, $4, $5)",
      [chatId, text(content), responseFormat, busyBehavior, idempotencyKey]);
    return rows[0]!;
  });
}

export async function editMessage(db: TestDatabase, userId: string, messageId: string, content: string,
  responseFormat: string | null = null, preserve: { sha256?: string; historyVersion?: string } = {}): Promise<InputResult> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>(
      "select * from chat_public.edit_chat_message($1, $2, $3, $4, $5)",
      [messageId, text(content), responseFormat, preserve.sha256 ?? null, preserve.historyVersion ?? null]);
    return rows[0]!;
  });
}

export async function deleteQueued(db: TestDatabase, userId: string, queuedMessageId: string): Promise<InputResult> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>("select * from chat_public.delete_queued_message($1)", [queuedMessageId]);
    return rows[0]!;
  });
}

export async function promoteQueued(db: TestDatabase, userId: string, queuedMessageId: string): Promise<InputResult> {
  return asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>("select * from chat_public.promote_queued_message($1)", [queuedMessageId]);
    return rows[0]!;
  });
}

export async function interrupt(db: TestDatabase, userId: string, chatId: string): Promise<void> {
  await asUser(db, userId, (client) => client.query("select chat_public.interrupt_chat($1)", [chatId]));
}

export async function submitToolResults(db: TestDatabase, userId: string, chatId: string, results: object[]): Promise<void> {
  await asUser(db, userId, (client) => client.query("select chat_public.submit_tool_results($1, $2)",
    [chatId, JSON.stringify(results)]));
}

export async function archiveChat(db: TestDatabase, userId: string, chatId: string, archived = true): Promise<void> {
  await asUser(db, userId, (client) => client.query("select chat_public.archive_chat($1, $2)", [chatId, archived]));
}

export async function setPlanMode(db: TestDatabase, userId: string, chatId: string, enabled: boolean): Promise<void> {
  await asUser(db, userId, (client) => client.query("select chat_public.set_chat_plan_mode($1, $2)", [chatId, enabled]));
}

type FenceRow = { runner_id: string; history_version: string; generation_attempt: string };
const toFence = (chatId: string, row: FenceRow): Fence =>
  ({ chatId, runnerId: row.runner_id, historyVersion: row.history_version, generationAttempt: row.generation_attempt });
const fenceArgs = (fence: Fence) => [fence.chatId, fence.runnerId, fence.historyVersion, fence.generationAttempt];

export async function acquire(db: TestDatabase, chatId: string, worker = "test-worker", client?: pg.ClientBase): Promise<Fence> {
  const { rows } = await (client ?? db.pool).query<FenceRow>("select * from chat_private.acquire_lease($1, $2)", [chatId, worker]);
  return toFence(chatId, rows[0]!);
}

/** The chat's fence as it stands (runner of the current lease, if any). */
export async function currentFence(db: TestDatabase, chatId: string): Promise<Fence> {
  const { rows } = await db.pool.query<FenceRow>("select * from chat_private.current_fence($1)", [chatId]);
  return toFence(chatId, rows[0]!);
}

/**
 * Test setup only: plants a live lease for a fresh runner on a chat in any state (no worker transition would give one
 * to a waiting or archived chat), so that worker transitions pass the fence and reach the transition-rule check.
 */
export async function plantLease(db: TestDatabase, chatId: string): Promise<Fence> {
  await db.pool.query(
    `insert into chat_private.chat_leases (chat_id, runner_id, worker_id, expires_at)
     values ($1, gen_random_uuid(), 'planted', now() + interval '1 hour')
     on conflict (chat_id) do update set runner_id = excluded.runner_id, expires_at = excluded.expires_at`, [chatId]);
  return currentFence(db, chatId);
}

/** Back-dates the chat's lease instead of waiting for it to expire. */
/** Records the server's current epoch as first seen a day ago, so the sweep's grace after a new epoch (a lease
 * length: sql/070 sweep_expired_leases) is over however recently the test server started: a test that expires a
 * lease and sweeps then sees the recovery whether it runs first or last. */
export async function settleServerEpoch(db: TestDatabase): Promise<void> {
  await db.pool.query("select chat_private._server_epoch()");
  await db.pool.query("update chat_private.server_epoch set observed_at = now() - interval '1 day'");
}

export async function expireLease(db: TestDatabase, chatId: string): Promise<void> {
  await db.pool.query("update chat_private.chat_leases set expires_at = now() - interval '1 second' where chat_id = $1", [chatId]);
}

/** `progress` may be raw JSON text, for values JavaScript numbers cannot hold. */
export async function commitStep(db: TestDatabase, fence: Fence, messages: object[], progress: object | string = {},
  client?: pg.ClientBase): Promise<Fence> {
  const { rows } = await (client ?? db.pool).query<FenceRow>(
    "select * from chat_private.commit_step($1, $2, $3, $4, $5, $6)",
    [...fenceArgs(fence), JSON.stringify(messages), typeof progress === "string" ? progress : JSON.stringify(progress)]);
  return toFence(fence.chatId, rows[0]!);
}

/** Commits an assistant step whose finalizer call produced `valueJson` (raw JSON text) as the validated candidate. */
export async function commitCandidate(db: TestDatabase, fence: Fence, valueJson: string, step = 1): Promise<Fence> {
  const call = { type: "tool-call", tool_call_id: `final-${step}`, tool_name: "coder_structured_output", args: {} };
  return commitStep(db, fence, [{ role: "assistant", content: [call] }],
    `{"steps": 1, "candidate": {"value": ${valueJson}, "step": ${step}, "message_index": 0}}`);
}

export async function finishTurn(db: TestDatabase, fence: Fence, outcome: object | null = null, client?: pg.ClientBase): Promise<string> {
  const { rows } = await (client ?? db.pool).query<{ status: string }>(
    "select chat_private.finish_turn($1, $2, $3, $4, $5) as status",
    [...fenceArgs(fence), outcome && JSON.stringify(outcome)]);
  return rows[0]!.status;
}

export async function finishError(db: TestDatabase, fence: Fence, kind = "provider_error", message = "the provider failed"): Promise<void> {
  await db.pool.query("select chat_private.finish_error($1, $2, $3, $4, $5, $6)", [...fenceArgs(fence), kind, message]);
}

export async function finishInterruption(db: TestDatabase, fence: Fence, partial: object[] = []): Promise<string> {
  const { rows } = await db.pool.query<{ status: string }>(
    "select chat_private.finish_interruption($1, $2, $3, $4, $5) as status", [...fenceArgs(fence), JSON.stringify(partial)]);
  return rows[0]!.status;
}

export async function enterRequiresAction(db: TestDatabase, fence: Fence, calls: { tool_call_id: string; tool_name: string }[],
  timeoutSeconds: number | null = null): Promise<void> {
  await db.pool.query("select chat_private.enter_requires_action($1, $2, $3, $4, $5, $6)",
    [...fenceArgs(fence), JSON.stringify(calls), timeoutSeconds]);
}

/** A running chat declaring the dynamic tool `lookup`, paused on one call of it (`call-1`). */
export async function requiresActionChat(db: TestDatabase, userId: string, responseFormat: string | null = null): Promise<InputResult> {
  const chat = await createChat(db, userId, "use the tool", responseFormat, { dynamicTools: [dynamicTool("lookup")] });
  let fence = await acquire(db, chat.chat_id);
  const call = { type: "tool-call", tool_call_id: "call-1", tool_name: "lookup", args: { q: "x" } };
  fence = await commitStep(db, fence, [{ role: "assistant", content: [call] }], { steps: 1 });
  await enterRequiresAction(db, fence, [{ tool_call_id: "call-1", tool_name: "lookup" }]);
  return chat;
}

export async function chatRow(db: TestDatabase, chatId: string): Promise<Record<string, unknown>> {
  const { rows } = await db.pool.query("select * from chat_public.chats where id = $1", [chatId]);
  return rows[0]!;
}

export async function chatStatus(db: TestDatabase, chatId: string): Promise<string> {
  const { rows } = await db.pool.query<{ state: string }>(
    "select case when archived then 'archived' else status::text end as state from chat_public.chats where id = $1", [chatId]);
  return rows[0]!.state;
}

export async function count(db: TestDatabase, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(`select count(*) as n from (${sql}) s`, params);
  return Number(rows[0]!.n);
}

export async function receipts(db: TestDatabase, chatId: string): Promise<{ id: string; request_id: string; status: string; code: string | null }[]> {
  const { rows } = await db.pool.query(
    `select id, structured_output_request_id as request_id, structured_output ->> 'status' as status,
            structured_output -> 'error' ->> 'code' as code
     from chat_public.chat_messages where chat_id = $1 and kind = 'receipt' order by id`, [chatId]);
  return rows;
}

export async function requestStatus(db: TestDatabase, requestId: string): Promise<{ status: string; error_code: string | null; receipt_message_id: string | null }> {
  const { rows } = await db.pool.query(
    "select status, error_code, receipt_message_id from chat_public.structured_output_requests where id = $1", [requestId]);
  return rows[0]!;
}

export const assistantText = (value: string) => ({ role: "assistant", content: [{ type: "text", text: value }] });

/** A dedicated connection (for concurrency tests), optionally inside an open transaction as `role`/`userId`. */
export async function connect(db: TestDatabase, as?: { role: string; userId: string | null }): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
  if (as) {
    await client.query("begin");
    await client.query("select set_config('role', $1, true), set_config('jwt.claims.sub', $2, true)", [as.role, as.userId ?? ""]);
  }
  return { client, pid: rows[0]!.pid };
}

/** The extra connections a test file opens (open transactions, lock waits, LISTEN); its after hook ends them. */
export class Connections {
  private readonly opened: pg.Client[] = [];

  /** A dedicated connection on `db` (see connect), ended by endAll. */
  async open(db: TestDatabase, as?: { role: string; userId: string | null }): Promise<{ client: pg.Client; pid: number }> {
    const opened = await connect(db, as);
    this.opened.push(opened.client);
    return opened;
  }

  /** A client opened elsewhere, ended with the rest. */
  track(client: pg.Client): void {
    this.opened.push(client);
  }

  async endAll(): Promise<void> {
    for (const client of this.opened.splice(0)) await client.end().catch(() => {});
  }
}

/** Barrier: resolves once backend `pid` waits on a lock (polled by query, bounded so a bug fails rather than hangs). */
export async function blockedOnLock(db: TestDatabase, pid: number): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    const { rows } = await db.pool.query("select 1 from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'", [pid]);
    if (rows.length > 0) return;
  }
  throw new Error(`backend ${pid} never waited on a lock`);
}

/**
 * How many chat row versions (UPDATEs of chat_public.chats) one statement writes, counted inside its transaction
 * (the session's counter also holds its earlier transactions until they are reported). `as` runs it as that user
 * (chat_user). Commits; returns the statement's first row.
 */
export async function chatRowUpdates(db: TestDatabase, sql: string, params: unknown[], as?: { userId: string }):
  Promise<{ n: number; row: Record<string, string> }> {
  const client = await db.pool.connect();
  try {
    const updates = async () => Number((await client.query<{ n: string }>(
      "select n_tup_upd as n from pg_stat_xact_user_tables where relid = 'chat_public.chats'::regclass")).rows[0]!.n);
    await client.query("begin");
    const before = await updates();
    if (as) {
      await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [as.userId]);
    }
    const { rows } = await client.query<Record<string, string>>(sql, params);
    if (as) await client.query("reset role");
    const n = await updates() - before;
    await client.query("commit");
    return { n, row: rows[0]! };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
