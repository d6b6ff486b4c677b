// Helpers for the worker tests: in-process workers against the test database, model configs pointing at the
// mock provider servers (mock/scripted providers, never live APIs), chats with a workspace, bounded waits.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pino } from "pino";
import type { TestDatabase } from "./db.ts";
import { waitFor } from "./wait.ts";
import { asUser, text, type InputResult } from "./chats.ts";
import { startWorker, type RunningWorker, type WorkerOptions } from "../../worker/index.ts";
import { DatabaseHealth } from "../../src/db/pool.ts";
import { READ_ONLY_DEPLOYMENT } from "../../src/tools/index.ts";
import { LeaseKeeper } from "../../worker/loop/lease-keeper.ts";
import { ChatListener } from "../../worker/loop/listener.ts";
import type { RuntimeDeps } from "../../worker/loop/runtime.ts";
import { tempFolder } from "./temp.ts";

// Many files take waitFor with the worker helpers.
export { waitFor };

export const testLogger = pino({ level: process.env.CHATD_TEST_LOG || "silent" });

/** A workspaces root holding `ws` with two files and a sub-folder. */
export async function makeWorkspaces(): Promise<string> {
  const root = await tempFolder("chatd-ws-");
  await mkdir(join(root, "ws", "docs"), { recursive: true });
  await writeFile(join(root, "ws", "a.txt"), "alpha file\nthe answer is 42\n");
  await writeFile(join(root, "ws", "docs", "b.md"), "# B\nbeta notes\n");
  return root;
}

export async function setSetting(db: TestDatabase, name: string, value: number): Promise<void> {
  await db.pool.query(
    `insert into chat_private.settings (name, value, description) values ($1, $2::text::jsonb, 'test')
     on conflict (name) do update set value = excluded.value`, [name, String(value)]);
}

/** Fast retries and a short lease, so tests wait for outcomes, never for production timings. */
export async function fastSettings(db: TestDatabase, extra: Record<string, number> = {}): Promise<void> {
  const values = { retry_initial_delay_ms: 10, retry_max_delay_ms: 40, lease_seconds: 3, ...extra };
  for (const [name, value] of Object.entries(values)) await setSetting(db, name, value);
}

export const MOCK_KEY = "sk-mock-SECRET-0123456789";

/** A model config for a mock provider server (label: mock provider). */
export async function addModelConfig(db: TestDatabase, id: string, provider: string, baseUrl: string | null, model = "mock-model"): Promise<void> {
  await db.pool.query(
    `insert into chat_private.model_configs (id, provider, model, base_url) values ($1, $2, $3, $4)
     on conflict (id) do update set provider = excluded.provider, base_url = excluded.base_url`, [id, provider, model, baseUrl]);
  await db.pool.query(
    `insert into chat_private.model_config_secrets (model_config_id, api_key) values ($1, $2)
     on conflict (model_config_id) do update set api_key = excluded.api_key`, [id, MOCK_KEY]);
}

export async function createWorkerChat(db: TestDatabase, userId: string, content: string,
  options: { model?: string; workspace?: string | null; dynamicTools?: object[]; responseFormat?: string | null } = {}): Promise<string> {
  const result = await asUser(db, userId, async (client) => {
    const { rows } = await client.query<InputResult>(
      `select * from chat_public.create_chat(content => $1, model_config_id => $2, workspace => $3, dynamic_tools => $4,
         response_format => $5)`,
      [text(content), options.model ?? "scripted", options.workspace === undefined ? "ws" : options.workspace,
        JSON.stringify(options.dynamicTools ?? []), options.responseFormat ?? null]);
    return rows[0]!;
  });
  return result.chat_id;
}

export async function startTestWorker(db: TestDatabase, workspacesRoot: string, options: Partial<WorkerOptions> = {}): Promise<RunningWorker> {
  return startWorker({
    databaseUrl: db.url, logger: testLogger, setup: false, sweepIntervalMs: 200, pollIntervalMs: 200, workspacesRoot,
    concurrency: 2, faults: {}, ...options,
  });
}

export async function statusOf(db: TestDatabase, chatId: string): Promise<string> {
  const { rows } = await db.pool.query<{ status: string }>("select status::text from chat_public.chats where id = $1", [chatId]);
  return rows[0]!.status;
}

export function waitForStatus(db: TestDatabase, chatId: string, status: string, timeoutMs?: number): Promise<true> {
  return waitFor(`status ${status}`, async () => (await statusOf(db, chatId)) === status || undefined, timeoutMs);
}

export interface MessageRow {
  id: string;
  role: string;
  kind: string;
  visibility: string;
  content: { type: string; [key: string]: unknown }[];
  finish: { reason?: string; raw?: string; dropped_tool_calls?: unknown[]; error?: { kind: string }; [key: string]: unknown } | null;
  provider_metadata: Record<string, unknown> | null;
}

export async function messages(db: TestDatabase, chatId: string): Promise<MessageRow[]> {
  const { rows } = await db.pool.query<MessageRow>(
    `select m.id, m.role::text, m.kind::text, m.visibility::text, m.content, i.finish, i.provider_metadata
     from chat_public.chat_messages m left join chat_private.message_internals i on i.message_id = m.id
     where m.chat_id = $1 and not m.deleted order by m.id`, [chatId]);
  return rows;
}

/** Part types per row, e.g. ["user:text", "assistant:reasoning,tool-call", "tool:tool-result"]. */
export function shape(rows: MessageRow[]): string[] {
  return rows.map((r) => `${r.role}:${r.content.map((p) => p.type).join(",")}`);
}

export async function turn(db: TestDatabase, chatId: string): Promise<{ steps: number; recoveries: number; finished: boolean }[]> {
  const { rows } = await db.pool.query<{ steps: number; recoveries: number; finished: boolean }>(
    "select steps, recoveries, finished_at is not null as finished from chat_private.turn_progress where chat_id = $1 order by id",
    [chatId]);
  return rows;
}

/** A real worker process (test/support/worker-process.ts) on the test database. */
export function spawnWorkerProcess(db: TestDatabase, workspacesRoot: string, env: Record<string, string> = {}): ChildProcess & { exited: Promise<number | null> } {
  const child = spawn(process.execPath, [join(import.meta.dirname, "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: db.url, CHATD_WORKSPACES_ROOT: workspacesRoot, CHATD_FAULTS: "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code, signal) => {
    if (process.env.CHATD_TEST_LOG) process.stderr.write(stderr);
    resolve(code ?? (signal != null ? 128 + 9 : null));
  }));
  return Object.assign(child, { exited });
}

/** Runs a worker process (with `env`, e.g. CHATD_FAULTS) until the chat waits again, then stops it with SIGTERM.
 * Returns its exit status: 0 is a graceful exit, so no `exit` fault point fired. */
export async function runUntilWaiting(db: TestDatabase, workspacesRoot: string, chatId: string, env: Record<string, string>): Promise<number | null> {
  const worker = spawnWorkerProcess(db, workspacesRoot, env);
  try {
    await waitForStatus(db, chatId, "waiting");
  } finally {
    worker.kill("SIGTERM");
  }
  return worker.exited;
}

/** Runtime dependencies for calling the chat_run task body directly (two runners racing in one process). */
export function makeDeps(db: TestDatabase, workspacesRoot: string, workerId: string): RuntimeDeps & { close(): Promise<void> } {
  const health = new DatabaseHealth(testLogger);
  const listener = new ChatListener(db.url, testLogger, health);
  return {
    pool: db.pool, health, workerId, log: testLogger, workspacesRoot, faults: {}, listener, leases: new LeaseKeeper(db.pool, testLogger),
    runs: new Set(), stopping: () => false, toolDeployment: READ_ONLY_DEPLOYMENT,
    stats: { acquired: 0, reacquiredInJob: 0, resumedAfterOutage: 0, turnsFinished: 0 },
    close: () => listener.close(),
  };
}
