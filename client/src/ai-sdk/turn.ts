// One AI SDK call as one chatd turn (or the rest of one). A new call creates a chat (or sends to
// providerOptions.chatd.chatId); a call whose prompt ends with results of tools chatd paused on submits them to that
// chat. Then it follows the chat's stream and yields what the caller may see: the committed assistant text and
// reasoning, the receipt's exact value text for a structured request, the client tool calls when the chat pauses,
// and the usage. The structured-output finalizer is chatd's own tool and is never yielded.
import type { LanguageModelV4CallOptions, SharedV4Warning } from "@ai-sdk/provider";
import type { ChatdClient } from "../client.ts";
import { envelopeText } from "../structured.ts";
import type { ChatMessage, PendingToolCall } from "../types.ts";
import { ChatdReceiptError, ChatdTurnError } from "./errors.ts";
import { dynamicTools, promptContent, toolResult, trailingToolResults } from "./prompt.ts";

/** chatd's reserved finalizer tool (the server runs it; clients never answer it). */
const FINALIZER = "coder_structured_output";

export interface ChatdCallOptions {
  /** Send to this chat instead of creating one. */
  chatId?: string;
  workspace?: string;
}

/** What a paused chat needs to continue: kept per tool call id, and echoed in the tool calls' providerMetadata. */
export interface Session {
  chatId: string;
  requestId: string | null;
}

export type TurnOutput =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: string; session: Session }
  | { type: "finish"; reason: "stop" | "tool-calls"; usage: Usage; valueJson: string | null; session: Session };

export interface Usage {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  reasoningTokens: number | undefined;
}

interface Started {
  session: Session;
  cursor: string | null;
}

function sessionFrom(value: unknown): Session | null {
  const chatd = (value as { chatd?: { chatId?: unknown; requestId?: unknown } } | undefined)?.chatd;
  if (typeof chatd?.chatId !== "string") return null;
  return { chatId: chatd.chatId, requestId: typeof chatd.requestId === "string" ? chatd.requestId : null };
}

/** The session a prompt's trailing tool results continue: from the tool calls' providerOptions, else from memory. */
function continuedSession(options: LanguageModelV4CallOptions, sessions: Map<string, Session>): Session | null {
  const results = trailingToolResults(options.prompt);
  if (results.length === 0) return null;
  for (const message of options.prompt) {
    if (message.role !== "assistant") continue;
    for (const part of message.content) {
      if (part.type === "tool-call" && part.toolCallId === results[0]!.toolCallId) {
        const found = sessionFrom(part.providerOptions);
        if (found) return found;
      }
    }
  }
  return sessions.get(results[0]!.toolCallId) ?? null;
}

export async function startTurn(client: ChatdClient, modelConfigId: string | undefined, options: LanguageModelV4CallOptions,
  sessions: Map<string, Session>, warnings: SharedV4Warning[]): Promise<Started> {
  const signal = options.abortSignal;
  const continued = continuedSession(options, sessions);
  if (continued) {
    const results = trailingToolResults(options.prompt);
    for (const result of results) sessions.delete(result.toolCallId);
    const cursor = await client.chats.lastMessageId(continued.chatId, signal);
    await client.chats.submitToolResults(continued.chatId, results.map(toolResult), signal);
    return { session: continued, cursor };
  }
  const format = options.responseFormat;
  const responseFormat = format?.type === "json"
    ? envelopeText((format.schema ?? {}) as Record<string, unknown>, format.name ?? "result", format.description)
    : undefined;
  const content = promptContent(options.prompt, warnings);
  const chatd = (options.providerOptions?.chatd ?? {}) as ChatdCallOptions;
  if (chatd.chatId) {
    const cursor = await client.chats.lastMessageId(chatd.chatId, signal);
    const sent = await client.chats.send(chatd.chatId, { content, responseFormat }, signal);
    return { session: { chatId: chatd.chatId, requestId: sent.structuredOutputRequestId }, cursor };
  }
  const tools = dynamicTools(options, warnings);
  const created = await client.chats.create({
    content, responseFormat, modelConfigId, workspace: chatd.workspace, ...(tools.length > 0 ? { dynamicTools: tools } : {}),
  }, signal);
  return { session: { chatId: created.chatId, requestId: created.structuredOutputRequestId }, cursor: created.messageId };
}

const add = (a: number | undefined, b: unknown) => (typeof b === "number" ? (a ?? 0) + b : a);

/** Follows the chat from the cursor until the turn pauses or ends (or the receipt of a structured request arrives). */
export async function* followTurn(client: ChatdClient, started: Started, signal?: AbortSignal): AsyncGenerator<TurnOutput> {
  const { session } = started;
  const structured = session.requestId !== null;
  const usage: Usage = { inputTokens: undefined, outputTokens: undefined, reasoningTokens: undefined };
  const calls = new Map<string, string>();
  let last = started.cursor === null ? -1n : BigInt(started.cursor);
  let receipt: ChatMessage | null = null;

  // Messages are taken once each, in id order, whether they come from the stream or the catch-up read below.
  function* take(message: ChatMessage): Generator<TurnOutput> {
    if (BigInt(message.rowId) <= last) return;
    last = BigInt(message.rowId);
    if (message.kind === "receipt" && message.structuredOutputRequestId === session.requestId) receipt = message;
    if (message.role !== "assistant" || message.kind !== "message") return;
    usage.inputTokens = add(usage.inputTokens, message.usage?.inputTokens);
    usage.outputTokens = add(usage.outputTokens, message.usage?.outputTokens);
    usage.reasoningTokens = add(usage.reasoningTokens, message.usage?.reasoningTokens);
    for (const part of message.content) {
      if (part.type === "reasoning" && typeof part.text === "string") yield { type: "reasoning", text: part.text };
      // A structured request's text is its receipt's value; what the model says around it is not.
      if (part.type === "text" && typeof part.text === "string" && !structured) yield { type: "text", text: part.text };
      if (part.type === "tool-call" && part.tool_name !== FINALIZER) calls.set(String(part.tool_call_id), JSON.stringify(part.args ?? {}));
    }
  }

  function* finishReceipt(message: ChatMessage): Generator<TurnOutput> {
    const output = message.structuredOutput!;
    if (output.status !== "succeeded") {
      throw new ChatdReceiptError({ code: output.error?.code ?? "unknown", message: output.error?.message ?? "", status: output.status,
        requestId: output.requestId, chatId: session.chatId });
    }
    yield { type: "text", text: output.valueJson! };
    yield { type: "finish", reason: "stop", usage, valueJson: output.valueJson, session };
  }

  const events = client.events(session.chatId, { afterMessageId: started.cursor, signal });
  for await (const event of events) {
    if (event.type === "message" && event.message) yield* take(event.message);
    if (receipt) {
      yield* finishReceipt(receipt);
      return;
    }
    const paused = event.type === "actionRequired";
    const ended = event.type === "status" && (event.status === "waiting" || event.status === "error");
    if (!paused && !ended) continue;
    // The first events of a subscription describe the chat as it is, before the messages it replays: read the
    // transcript up to now, so a turn that ended before the stream started is complete.
    for (const message of await client.chats.messages(session.chatId, { afterId: last.toString() }, signal)) yield* take(message);
    if (receipt) {
      yield* finishReceipt(receipt);
      return;
    }
    if (paused) {
      const pending: PendingToolCall[] = event.pendingToolCalls ?? [];
      for (const call of pending) {
        yield { type: "tool-call", toolCallId: call.tool_call_id, toolName: call.tool_name, input: calls.get(call.tool_call_id) ?? "{}", session };
      }
      yield { type: "finish", reason: "tool-calls", usage, valueJson: null, session };
      return;
    }
    if (event.status === "error") {
      const chat = await client.chats.get(session.chatId, signal);
      throw new ChatdTurnError({ chatId: session.chatId, lastError: chat?.lastError ?? null });
    }
    // waiting: a text turn is done; a structured request's receipt commits with the turn's end, so it is read above.
    if (!structured) {
      yield { type: "finish", reason: "stop", usage, valueJson: null, session };
      return;
    }
  }
}
