// The server, a worker and a mock provider on one test database: what the live GraphQL tests run against.
import { startMockProvider, type Barrier, type MockProviderServer } from "../support/mock-providers/index.ts";
import { addModelConfig, fastSettings, makeWorkspaces, startTestWorker } from "../support/worker.ts";
import type { RunningWorker } from "../../worker/index.ts";
import type { ApiOptions } from "../../src/api/server.ts";
import { startTestApi, type TestApi } from "./harness.ts";

export interface LiveStack {
  t: TestApi;
  /** The mock provider, configured as model config `mock` (openai-chat protocol). */
  server: MockProviderServer;
  worker: RunningWorker;
  /** The worker's CHATD_WORKSPACES_ROOT (makeWorkspaces: workspace `ws`). */
  workspacesRoot: string;
  users: Record<string, { id: string; token: string }>;
  /** Barriers a failed test may leave unreleased; `close` releases them so held responses can end. */
  barriers: Barrier[];
  close(): Promise<void>;
}

export async function startLiveStack(userNames: string[], apiOptions: Partial<ApiOptions> = {}): Promise<LiveStack> {
  const t = await startTestApi(apiOptions);
  const users: LiveStack["users"] = {};
  for (const name of userNames) users[name] = await t.user(name);
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
  await fastSettings(t.db);
  const server = await startMockProvider();
  await addModelConfig(t.db, "mock", "openai-chat", server.url);
  const workspacesRoot = await makeWorkspaces();
  const worker = await startTestWorker(t.db, workspacesRoot);
  const barriers: Barrier[] = [];
  return {
    t, server, worker, workspacesRoot, users, barriers,
    async close() {
      for (const b of barriers) b.resolve();
      try {
        await worker.stop();
      } finally {
        await server.close();
        await t.close();
      }
    },
  };
}
