// @chatd/client/ai-sdk: chatd as an AI SDK provider. `createChatd({url, token})(modelConfigId?)` is a LanguageModel
// for generateText / streamText; `output: Output.object({schema})` becomes a chatd structured request whose
// server-validated receipt is the result, and tools become chatd dynamic tools that the SDK runs.
import { createChatdClient, type ChatdClient, type ChatdClientOptions } from "../client.ts";
import { ChatdLanguageModel } from "./model.ts";
import type { Session } from "./turn.ts";

export { ChatdLanguageModel } from "./model.ts";
export { ChatdReceiptError, ChatdTurnError } from "./errors.ts";
export type { ChatdCallOptions } from "./turn.ts";

export interface ChatdProvider {
  /** A model on chatd's model config `modelConfigId` (the server's default when omitted). */
  (modelConfigId?: string): ChatdLanguageModel;
  languageModel(modelConfigId?: string): ChatdLanguageModel;
  /** The client the provider uses (e.g. to read a chat the provider created). */
  readonly client: ChatdClient;
}

export function createChatd(options: ChatdClientOptions & { client?: ChatdClient }): ChatdProvider {
  const client = options.client ?? createChatdClient(options);
  // Paused chats by tool call id, for SDK versions that do not echo providerMetadata back in the next prompt.
  const sessions = new Map<string, Session>();
  const model = (modelConfigId?: string) => new ChatdLanguageModel(client, modelConfigId, sessions);
  return Object.assign(model, { languageModel: model, client });
}
