// `client.structured(...)`: one structured request end to end. It builds the response_format envelope text itself
// (the schema is sent as JSON text, never as a GraphQL JSON argument), creates the chat or sends to `chatId`, and
// waits on the event stream for the request's receipt, which resolves it whether it succeeded, failed or was
// canceled. The stream starts below the input, so a receipt committed before the subscription is replayed.
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { ChatsApi, ContentInput } from "./chats.ts";
import { ChatdError } from "./errors.ts";
import { chatEvents } from "./events.ts";
import { parseExact, type Exact } from "./exact-json.ts";
import { isStandardSchema, toJsonSchema, validateWith, type InferSchema, type SchemaInput } from "./schema.ts";
import type { Transport } from "./transport.ts";
import type { ChatMessage } from "./types.ts";

export type NumbersMode = "exact" | "number";

export type StructuredOptions<S extends SchemaInput, N extends NumbersMode = "number"> = ContentInput & {
  schema: S;
  /** The envelope's `json_schema.name` (default "result"). */
  name?: string;
  description?: string;
  /** Send to this chat (queued behind a running turn) instead of creating one. */
  chatId?: string;
  /** New chats only: the workspace folder and model config. */
  workspace?: string;
  modelConfigId?: string;
  idempotencyKey?: string;
  /** Stops waiting (rejects with the signal's reason); the request itself goes on in chatd. */
  signal?: AbortSignal;
  /** "exact": parse valueJson without losing digits (big integers as bigint); the schema's own checks are skipped. */
  numbers?: N;
};

interface Finished {
  requestId: string;
  chatId: string;
  /** The receipt's message rowId. */
  messageId: string;
}

export type StructuredResult<T> = Finished & (
  | { status: "succeeded"; value: T; valueJson: string; error: null }
  | { status: "failed" | "canceled"; value: null; valueJson: null; error: { code: string; message: string } });

/** The value's type: the schema's, with numbers widened under `numbers: "exact"`. */
export type StructuredValue<S, N extends NumbersMode> = "exact" extends N ? Exact<InferSchema<S>> : InferSchema<S>;

export function envelopeText(schema: Record<string, unknown>, name = "result", description?: string): string {
  return JSON.stringify({ type: "json_schema", json_schema: { name, ...(description ? { description } : {}), schema } });
}

/** Waits for the receipt of `requestId` on the chat's stream, from `cursor` on. */
export async function waitForReceipt(transport: Transport, chatId: string, requestId: string, cursor: string | null,
  signal?: AbortSignal): Promise<ChatMessage> {
  for await (const event of chatEvents(transport, chatId, { afterMessageId: cursor, signal })) {
    const message = event.message;
    if (event.type === "message" && message?.kind === "receipt" && message.structuredOutputRequestId === requestId) return message;
  }
  throw new ChatdError("the chat stream ended before the receipt", { code: "STREAM_ENDED" });
}

/** The result for a receipt message; `value` parsed from valueJson as `numbers` says, then checked by a Standard Schema. */
export async function resultFromReceipt(receipt: ChatMessage, schema: SchemaInput | null, numbers: NumbersMode = "number")
  : Promise<StructuredResult<unknown>> {
  const output = receipt.structuredOutput!;
  const base = { requestId: output.requestId, chatId: receipt.chatId, messageId: receipt.rowId };
  if (output.status !== "succeeded") {
    return { ...base, status: output.status, value: null, valueJson: null, error: output.error ?? { code: "unknown", message: "" } };
  }
  const valueJson = output.valueJson!;
  let value: unknown = numbers === "exact" ? parseExact(valueJson) : JSON.parse(valueJson);
  if (numbers !== "exact" && schema && isStandardSchema(schema)) value = await validateWith(schema as StandardSchemaV1, value);
  return { ...base, status: "succeeded", value, valueJson, error: null };
}

/** Untyped: the typed signature is ChatdClient.structured's (client.ts). */
export async function structured(transport: Transport, chats: ChatsApi, options: StructuredOptions<SchemaInput, NumbersMode>)
  : Promise<StructuredResult<unknown>> {
  const responseFormat = envelopeText(toJsonSchema(options.schema), options.name, options.description);
  const content = { prompt: options.prompt, content: options.content } as ContentInput;
  let chatId: string;
  let cursor: string | null;
  let requestId: string | null;
  if (options.chatId) {
    chatId = options.chatId;
    // A queued request may run and finish before we subscribe: start from the chat's last message before the send.
    cursor = await chats.lastMessageId(chatId, options.signal);
    const sent = await chats.send(chatId, { ...content, responseFormat, idempotencyKey: options.idempotencyKey }, options.signal);
    requestId = sent.structuredOutputRequestId;
  } else {
    const created = await chats.create({
      ...content, responseFormat, workspace: options.workspace, modelConfigId: options.modelConfigId,
      idempotencyKey: options.idempotencyKey,
    }, options.signal);
    chatId = created.chatId;
    cursor = created.messageId;
    requestId = created.structuredOutputRequestId;
  }
  if (!requestId) throw new ChatdError("chatd did not create a structured output request", { code: "NO_REQUEST" });
  const receipt = await waitForReceipt(transport, chatId, requestId, cursor, options.signal);
  return resultFromReceipt(receipt, options.schema, options.numbers);
}
