// A mock stop-hook receiver on 127.0.0.1 (label: mock hook server, not a real integration): records every signed
// request, answers with a scripted reply per call, and can hold a call on a barrier until the test releases it.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUser, setStructuredExperiment } from "../support/chats.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { fastSettings, makeWorkspaces } from "../support/worker.ts";
import { verifySignature, SIGNATURE_HEADER } from "../../src/hooks/index.ts";

export const HOOK_SECRET = "whsec-test-0123456789abcdef";

export interface CapturedCall {
  body: string;
  signature: string;
  /** The signature checked against HOOK_SECRET over the exact body. */
  verified: boolean;
  payload: Record<string, unknown>;
}

export interface Reply {
  status?: number;
  body?: string;
  /** Hold the answer until `release()` (or forever, until the client gives up). */
  hold?: boolean;
}

export interface MockHookServer {
  url: string;
  calls: CapturedCall[];
  /** Replies in call order; the last one repeats. */
  replies: Reply[];
  /** Resolves when the n-th call (1-based) has arrived. */
  arrived(n: number): Promise<void>;
  release(): void;
  /** Forgets the calls so far (held ones are released): the next call is call 1 again, answered by `replies[0]`. */
  reset(replies?: Reply[]): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startHookServer(replies: Reply[] = [{ status: 200, body: "{}" }]): Promise<MockHookServer> {
  const calls: CapturedCall[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let releaseHeld: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const signature = String(req.headers[SIGNATURE_HEADER] ?? "");
      calls.push({ body, signature, verified: verifySignature(HOOK_SECRET, body, signature, Math.floor(Date.now() / 1000)),
        payload: JSON.parse(body) as Record<string, unknown> });
      for (const w of waiters.filter((x) => calls.length >= x.n)) w.resolve();
      const reply = state.replies[Math.min(calls.length - 1, state.replies.length - 1)] ?? {};
      if (reply.hold === true) await new Promise<void>((resolve) => releaseHeld.push(resolve));
      res.writeHead(reply.status ?? 200, { "content-type": "application/json" });
      res.end(reply.body ?? "{}");
    })().catch(() => res.destroy());
  });
  const state = { replies };
  const release = () => {
    const held = releaseHeld;
    releaseHeld = [];
    for (const r of held) r();
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    get replies() {
      return state.replies;
    },
    set replies(value: Reply[]) {
      state.replies = value;
    },
    arrived: (n) => calls.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    release,
    reset(next = [{ status: 200, body: "{}" }]) {
      release();
      calls.length = 0;
      waiters.length = 0;
      state.replies = next;
    },
    close: () => new Promise((resolve) => {
      for (const r of releaseHeld) r();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Configures one enabled stop hook (as an operator would, with plain SQL); returns its id. */
export async function addStopHook(db: TestDatabase, url: string, options: { name?: string; timeoutMs?: number } = {}): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    "insert into chat_private.stop_hooks (name, url, timeout_ms) values ($1, $2, $3) returning id",
    [options.name ?? "test-hook", url, options.timeoutMs ?? 10_000]);
  await db.pool.query("insert into chat_private.stop_hook_secrets (hook_id, secret) values ($1, $2)", [rows[0]!.id, HOOK_SECRET]);
  return rows[0]!.id;
}

export async function removeStopHooks(db: TestDatabase): Promise<void> {
  await db.pool.query("delete from chat_private.stop_hooks");
}

export const continueWith = (context: string, notice?: string): Reply =>
  ({ status: 200, body: JSON.stringify({ model_context: context, ...(notice != null ? { user_message: notice } : {}) }) });

export interface HookFixture {
  db: TestDatabase;
  user: string;
  hook: MockHookServer;
  root: string;
  close(): Promise<void>;
}

/** A test database with structured output on, one user, workspaces, and one enabled stop hook on a mock server. */
export async function startHookFixture(userName: string, leaseSeconds: number): Promise<HookFixture> {
  const db = await createTestDatabase();
  await fastSettings(db, { lease_seconds: leaseSeconds });
  await setStructuredExperiment(db, true);
  const user = await createUser(db, userName);
  const root = await makeWorkspaces();
  const hook = await startHookServer();
  await addStopHook(db, hook.url);
  return { db, user, hook, root, async close() { await hook.close(); await db.drop(); } };
}
