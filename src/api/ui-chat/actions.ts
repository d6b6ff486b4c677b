// What a `POST /api/chat` asks for, as chatd transitions (GraphQL mutations, so every check and refusal is the
// API's own): the first message of an unknown chat id creates a chat, a new user message is sent (queued when
// the chat is busy), a user message sent again with its chatd `messageId` (the SDK's edit) or a regenerate is an
// edit, and an assistant message carrying tool outputs answers the pending client tool calls.
import { createHash } from "node:crypto";
import type { UIMessage } from "ai";
import { badRequest } from "../http/errors.ts";
import { GraphQLRefusal, type Executor } from "./graphql.ts";

export interface ChatRequest {
  id: string;
  messages: UIMessage[];
  trigger?: "submit-message" | "regenerate-message";
  messageId?: string;
  /** The response_format envelope as JSON text (exact), or an object (serialized: big numbers lose digits). */
  responseFormat?: string | Record<string, unknown> | null;
  workspace?: string | null;
  /** Client tools of a new chat: `{name, description?, inputSchema}` (the AI SDK's spelling) or chatd's `input_schema`. */
  dynamicTools?: unknown[] | null;
  modelConfigId?: string | null;
}

/** What the stream starts from: the turn's input row and the rows already known to the client. */
export type Action =
  | { kind: "turn"; chatId: string; inputRowId: string; cursor: string; knownCalls: string[] }
  | { kind: "queued"; chatId: string; queuedMessageId: string; structuredOutputRequestId: string | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ROW_ID = /^\d{1,19}$/;

const INPUT = "result { chatId messageId queuedMessageId structuredOutputRequestId }";
const CREATE = `mutation($c: JSON!, $rf: String, $ws: String, $tools: JSON, $model: String, $key: String) {
  createChat(input: {content: $c, responseFormat: $rf, workspace: $ws, dynamicTools: $tools, modelConfigId: $model,
    idempotencyKey: $key}) { ${INPUT} } }`;
const SEND = `mutation($id: UUID!, $c: JSON!, $rf: String, $key: String) {
  sendChatMessage(input: {chatId: $id, content: $c, responseFormat: $rf, idempotencyKey: $key}) { ${INPUT} } }`;
const EDIT = `mutation($m: BigInt!, $c: JSON!, $rf: String) { editChatMessage(input: {messageId: $m, content: $c, responseFormat: $rf}) { ${INPUT} } }`;
const SUBMIT = `mutation($id: UUID!, $r: JSON!) { submitToolResults(input: {chatId: $id, results: $r}) { result { status } } }`;
const CHAT = `query($id: UUID!) { chatByRowId(rowId: $id) { rowId status pendingToolCalls
  messages: chatMessagesByChatId(orderBy: ROW_ID_DESC, first: 1) { nodes { rowId } } } }`;

interface InputResult {
  chatId: string;
  messageId: string | null;
  queuedMessageId: string | null;
  structuredOutputRequestId: string | null;
}

interface ChatHead {
  rowId: string;
  status: string;
  pendingToolCalls: { tool_call_id: string; tool_name: string }[];
  messages: { nodes: { rowId: string }[] };
}

/** Idempotency keys are at most 200 characters; long client ids are hashed. */
function key(prefix: string, ...ids: string[]): string {
  const raw = `${prefix}:${ids.join(":")}`;
  return raw.length <= 200 ? raw : `${prefix}:sha256:${createHash("sha256").update(raw).digest("hex")}`;
}

function textContent(message: UIMessage): { type: "text"; text: string }[] {
  const text = message.parts.filter((part) => part.type === "text").map((part) => (part as { text: string }).text).join("");
  return [{ type: "text", text }];
}

function formatText(format: ChatRequest["responseFormat"]): string | null {
  if (format === undefined || format === null) return null;
  return typeof format === "string" ? format : JSON.stringify(format);
}

/** The declarations as createChat takes them: `inputSchema` becomes `input_schema`; the rest is checked by chatd. */
function dynamicTools(tools: ChatRequest["dynamicTools"]): unknown[] {
  return (tools ?? []).map((tool) => {
    if (typeof tool !== "object" || tool === null || !("inputSchema" in tool) || "input_schema" in tool) return tool;
    const { inputSchema, ...rest } = tool as Record<string, unknown>;
    return { ...rest, input_schema: inputSchema };
  });
}

function inputAction(result: InputResult, cursor: string | null = null): Action {
  if (result.messageId) {
    return { kind: "turn", chatId: result.chatId, inputRowId: result.messageId, cursor: cursor ?? result.messageId, knownCalls: [] };
  }
  return { kind: "queued", chatId: result.chatId, queuedMessageId: result.queuedMessageId ?? "",
    structuredOutputRequestId: result.structuredOutputRequestId };
}

async function chatHead(executor: Executor, id: string): Promise<ChatHead | null> {
  if (!UUID.test(id)) return null;
  return (await executor.run<{ chatByRowId: ChatHead | null }>(CHAT, { id })).chatByRowId;
}

/** The chat a request names: its id when that is a chat of the caller's, else the chatd id that the stream's
 * `start` chunk put in the metadata of the client's latest message that has one. */
async function findChat(executor: Executor, request: ChatRequest): Promise<ChatHead | null> {
  const direct = await chatHead(executor, request.id);
  if (direct) return direct;
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const chatId = (request.messages[i]?.metadata as { chatId?: unknown } | undefined)?.chatId;
    if (typeof chatId === "string") return chatHead(executor, chatId);
  }
  return null;
}

interface ToolPart { type: string; toolCallId?: string; state?: string; output?: unknown; errorText?: string }

/** Results for the pending calls that the client's assistant message answers. */
type ToolResult = { tool_call_id: string; result: unknown; is_error: boolean };

function toolResults(message: UIMessage, pending: ChatHead["pendingToolCalls"]): ToolResult[] {
  const parts = message.parts as ToolPart[];
  return pending.flatMap((call): ToolResult[] => {
    const part = parts.find((p) => p.toolCallId === call.tool_call_id);
    if (part?.state === "output-available") return [{ tool_call_id: call.tool_call_id, result: part.output ?? null, is_error: false }];
    if (part?.state === "output-error") return [{ tool_call_id: call.tool_call_id, result: part.errorText ?? "error", is_error: true }];
    return [];
  });
}

export async function performChatRequest(executor: Executor, request: ChatRequest): Promise<Action> {
  const lastIndex = request.messages.length - 1;
  const last = request.messages[lastIndex];
  if (!last) throw badRequest("messages", "must hold at least one message");
  const format = formatText(request.responseFormat);
  const chat = await findChat(executor, request);

  if (last.role === "assistant") {
    if (!chat) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
    const results = toolResults(last, chat.pendingToolCalls);
    if (results.length === 0) throw badRequest(`messages[${lastIndex}].parts`, "answer none of the chat's pending tool calls");
    // Everything the answer needs is computed before it is submitted: a refusal after the submit would invite a
    // retry that answers twice.
    const cursor = chat.messages.nodes[0]?.rowId ?? "0";
    const inputRowId = last.id.startsWith("turn-") && ROW_ID.test(last.id.slice(5)) ? last.id.slice(5) : cursor;
    const knownCalls = (last.parts as ToolPart[]).flatMap((part) => (part.toolCallId ? [part.toolCallId] : []));
    await executor.run(SUBMIT, { id: chat.rowId, r: results });
    return { kind: "turn", chatId: chat.rowId, inputRowId, cursor, knownCalls };
  }
  if (last.role !== "user") throw badRequest(`messages[${lastIndex}].role`, "must be user (or assistant, with tool outputs)");
  const content = textContent(last);

  const editId = request.trigger === "regenerate-message" ? last.id : request.messageId;
  if (editId !== undefined && ROW_ID.test(editId) && chat) {
    const { editChatMessage } = await executor.run<{ editChatMessage: { result: InputResult } }>(EDIT, { m: editId, c: content, rf: format });
    return inputAction(editChatMessage.result);
  }
  if (request.trigger === "regenerate-message") throw badRequest(`messages[${lastIndex}].id`, "must be the chatd id of the last user message to regenerate");

  let chatId = chat?.rowId;
  if (!chatId) {
    const users = request.messages.filter((message) => message.role === "user").length;
    const { createChat } = await executor.run<{ createChat: { result: InputResult } }>(CREATE, {
      c: content, rf: users === 1 ? format : null, ws: request.workspace ?? null, tools: dynamicTools(request.dynamicTools),
      model: request.modelConfigId ?? null, key: key("ui-chat", request.id),
    });
    // The first message of a chat id creates the chat (a retry returns the same one); later messages under the
    // same id find it through the same idempotency key and are sent to it.
    if (users === 1) return inputAction(createChat.result);
    chatId = createChat.result.chatId;
  }
  const { sendChatMessage } = await executor.run<{ sendChatMessage: { result: InputResult } }>(SEND, {
    id: chatId, c: content, rf: format, key: key("ui-msg", chatId, last.id),
  });
  return inputAction(sendChatMessage.result);
}
