// The live stack for the client tests (real server, real PostgreSQL, worker with the scripted provider as the default
// model), a client for a user of it, and the scripted provider's script text (the latest user message is the script).
import { createChatdClient, type ChatdClient, type ChatdClientOptions } from "@chatd/client";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

export interface ClientStack {
  live: LiveStack;
  token: string;
  client(options?: Partial<ChatdClientOptions>): ChatdClient;
  close(): Promise<void>;
}

export async function startClientStack(): Promise<ClientStack> {
  const live = await startLiveStack(["alice"]);
  const token = live.users.alice!.token;
  const clients: ChatdClient[] = [];
  return {
    live,
    token,
    client(options = {}) {
      const client = createChatdClient({ url: live.t.api.graphqlUrl, token, ...options });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) await client.close();
      await live.close();
    },
  };
}

/** A scripted-provider script: each step is what the model says next. */
export const script = (...steps: object[]) => JSON.stringify({ script: steps });

/** A step that submits `valueText` (exact JSON text) through the structured-output finalizer. */
export const finalize = (valueText: string) => ({ tool_calls: [{ name: "coder_structured_output", args_raw: `{"output": ${valueText}}` }] });
