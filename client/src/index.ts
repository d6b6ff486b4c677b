// @chatd/client: structured requests with typed, exact results, chat transitions and a reconnecting event stream.
// The AI SDK provider is the separate entry point `@chatd/client/ai-sdk`.
export { createChatdClient, type ChatdClient, type ChatdClientOptions } from "./client.ts";
export type { ChatsApi, ContentInput, CreateOptions, EditOptions, ListOptions, MessagesOptions, SendOptions } from "./chats.ts";
export type { BatchesApi, BatchListOptions, BatchResultsOptions } from "./batches.ts";
export type { EventsOptions } from "./events.ts";
export type { NumbersMode, StructuredOptions, StructuredResult, StructuredValue } from "./structured.ts";
export type { InferSchema, JsonSchemaObject, SchemaInput } from "./schema.ts";
export { LosslessNumber, type Exact, type ExactNumber } from "./exact-json.ts";
export { ChatdAuthError, ChatdError, ChatdNetworkError, ChatdRequestError, ChatdSchemaError } from "./errors.ts";
export type { GraphQLErrorEntry, Validation } from "./errors.ts";
export type { TokenSource } from "./transport.ts";
export type * from "./types.ts";
