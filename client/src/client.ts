// createChatdClient: the one object a TypeScript app holds. It owns one HTTP transport and (lazily) one websocket.
import { BatchesApi } from "./batches.ts";
import { ChatsApi } from "./chats.ts";
import { chatEvents, type EventsOptions } from "./events.ts";
import type { SchemaInput } from "./schema.ts";
import { structured, type NumbersMode, type StructuredOptions, type StructuredResult, type StructuredValue } from "./structured.ts";
import { Transport, type TransportOptions } from "./transport.ts";
import type { ChatEvent } from "./types.ts";

export type ChatdClientOptions = TransportOptions;

export interface ChatdClient {
  /** One structured request: resolves with the receipt (succeeded, failed or canceled), typed from `schema`. */
  structured<const S extends SchemaInput, const N extends NumbersMode = "number">(options: StructuredOptions<S, N>)
    : Promise<StructuredResult<StructuredValue<S, N>>>;
  chats: ChatsApi;
  /** Batches and their results. */
  batches: BatchesApi;
  /** The chat's events; reconnects by itself and never repeats or skips a message. `break` ends it. */
  events(chatId: string, options?: EventsOptions): AsyncIterable<ChatEvent>;
  /** Any GraphQL query or mutation of chatd's schema.graphql. */
  request<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, signal?: AbortSignal): Promise<T>;
  /** Closes the websocket (open streams end); HTTP needs no closing. */
  close(): Promise<void>;
}

export function createChatdClient(options: ChatdClientOptions): ChatdClient {
  const transport = new Transport(options);
  const chats = new ChatsApi(transport);
  return {
    // The typed signature is the interface's; inferring through it here would instantiate FromSchema generically.
    structured: ((request: StructuredOptions<SchemaInput, NumbersMode>) => structured(transport, chats, request)) as unknown as ChatdClient["structured"],
    chats,
    batches: new BatchesApi(transport),
    events: (chatId, eventOptions) => chatEvents(transport, chatId, eventOptions),
    request: (query, variables, signal) => transport.request(query, variables, signal),
    close: () => transport.close(),
  };
}
