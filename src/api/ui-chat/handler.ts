// The AI SDK UI message stream endpoint (`useChat` with `DefaultChatTransport({ api: "<chatd>/api/chat" })`):
//   POST /api/chat                 send (or create, edit, answer tool calls) and stream the turn
//   GET  /api/chat/:id/stream      resume: replay the running turn from chatd's durable transcript, then live
//                                  (204 when no turn runs)
//   GET  /api/chat/:id/messages    the transcript as UI messages, for a client that loads a chat
//   POST /api/chat/:id/stop        interrupt the running turn (a structured request gets a canceled receipt)
//   POST /api/response-format/check  the server's own response_format check, for forms that check before sending
// A dropped connection never interrupts: turns are durable and a reload resumes them. Streams are SSE with
// `x-vercel-ai-ui-message-stream: v1` (the SDK's pipeUIMessageStreamToResponse).
import type { IncomingMessage, ServerResponse } from "node:http";
import { createUIMessageStream, pipeUIMessageStreamToResponse } from "ai";
import type { PostGraphileInstance } from "postgraphile";
import { validateResponseFormat } from "../../structured/index.ts";
import { logger } from "../../log.ts";
import type { Identity } from "../auth.ts";
import { MAX_REQUEST_BYTES } from "../preset.ts";
import { performChatRequest, BadRequest, type Action, type ChatRequest } from "./actions.ts";
import { executorFor, GraphQLRefusal, type Executor } from "./graphql.ts";
import { latestInput, readChat, uiMessages } from "./history.ts";
import { streamTurn } from "./turn-stream.ts";

const KEEP_ALIVE_MS = 15_000;
const ROUTE = /^\/api\/(?:chat(?:\/([^/?]+)(?:\/(stream|messages|stop))?)?|response-format\/check)\/?(?:\?.*)?$/;
const INTERRUPT = `mutation($id: UUID!) { interruptChat(input: {chatId: $id}) { result { status } } }`;
const DELETE = `mutation($id: UUID!) { deleteChat(input: {chatId: $id}) { result } }`;

const STATUS_OF: Record<string, number> = {
  UNAUTHENTICATED: 401, NOT_FOUND: 404, INVALID_INPUT: 400, INVALID_RESPONSE_FORMAT: 400, TRANSITION_NOT_ALLOWED: 409,
  STRUCTURED_OUTPUT_DISABLED: 403, PAYLOAD_TOO_LARGE: 413,
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function refuse(res: ServerResponse, error: GraphQLRefusal): void {
  json(res, STATUS_OF[error.code] ?? 422, { error: { code: error.code, message: error.message, validations: error.validations } });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new GraphQLRefusal(`request bodies are limited to ${MAX_REQUEST_BYTES} bytes`, "PAYLOAD_TOO_LARGE");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BadRequest("the body is not JSON");
  }
}

function chatRequest(body: unknown): ChatRequest {
  const value = body as Partial<ChatRequest> | null;
  if (!value || typeof value !== "object" || typeof value.id !== "string" || value.id === "" || !Array.isArray(value.messages)) {
    throw new BadRequest("the body must be {id, messages, ...} as the AI SDK's DefaultChatTransport sends it");
  }
  if (value.responseFormat != null && typeof value.responseFormat !== "string" && typeof value.responseFormat !== "object") {
    throw new BadRequest("responseFormat must be the JSON text of a response_format envelope");
  }
  if (value.dynamicTools != null && !Array.isArray(value.dynamicTools)) {
    throw new BadRequest("dynamicTools must be an array of {name, description, inputSchema}");
  }
  return value as ChatRequest;
}

type Writer = Parameters<Parameters<typeof createUIMessageStream>[0]["execute"]>[0]["writer"];

function stream(res: ServerResponse, write: (writer: Writer) => Promise<void>): void {
  const uiStream = createUIMessageStream({
    execute: ({ writer }) => write(writer),
    onError: (error) => {
      if (error instanceof GraphQLRefusal) return error.message;
      logger.warn({ err: error }, "useChat stream failed");
      return "the chat stream was interrupted; resume it";
    },
  });
  // A failed write means the client went away; the turn goes on and a resume picks it up.
  void pipeUIMessageStreamToResponse({ response: res, stream: uiStream, keepAliveMs: KEEP_ALIVE_MS }).catch(() => {});
}

function streamAction(res: ServerResponse, executor: Executor, action: Action, signal: AbortSignal): void {
  stream(res, async (writer) => {
    if (action.kind === "queued") {
      writer.write({ type: "start", messageMetadata: { chatId: action.chatId } });
      writer.write({ type: "data-queued", data: { chatId: action.chatId, queuedMessageId: action.queuedMessageId,
        structuredOutputRequestId: action.structuredOutputRequestId }, transient: true });
      writer.write({ type: "finish" });
      return;
    }
    await streamTurn(writer, { executor, chatId: action.chatId, inputRowId: action.inputRowId, cursor: action.cursor,
      knownCalls: action.knownCalls, signal });
  });
}

async function route(req: IncomingMessage, res: ServerResponse, executor: Executor, signal: AbortSignal): Promise<void> {
  const match = ROUTE.exec(req.url ?? "")!;
  const [, rawId, action] = match;
  let id: string | undefined;
  try {
    id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  } catch {
    throw new BadRequest("the chat id in the path is not valid");
  }
  const method = req.method ?? "GET";
  if (req.url?.startsWith("/api/response-format/check") && method === "POST") {
    const body = await readJson(req) as { responseFormat?: unknown };
    if (typeof body?.responseFormat !== "string") throw new BadRequest("responseFormat must be a string");
    const result = validateResponseFormat(body.responseFormat);
    json(res, 200, result.ok ? { ok: true } : { ok: false, errors: result.errors });
    return;
  }
  if (id === undefined && method === "POST") {
    const request = chatRequest(await readJson(req));
    streamAction(res, executor, await performChatRequest(executor, request), signal);
    return;
  }
  if (id !== undefined && action === "stop" && method === "POST") {
    const { interruptChat } = await executor.run<{ interruptChat: { result: { status: string } } }>(INTERRUPT, { id });
    json(res, 200, { status: interruptChat.result.status.toLowerCase() });
    return;
  }
  // The chat deleted for good (sql/160 delete_chat): a running turn is stopped first.
  if (id !== undefined && action === undefined && method === "DELETE") {
    const { deleteChat } = await executor.run<{ deleteChat: { result: string } }>(DELETE, { id });
    json(res, 200, { chatId: deleteChat.result, deleted: true });
    return;
  }
  if (id !== undefined && (action === "stream" || action === "messages") && method === "GET") {
    const chat = /^[0-9a-f-]{36}$/i.test(id) ? await readChat(executor, id) : null;
    if (!chat) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
    const input = latestInput(chat.rows);
    const active = chat.status === "running" || chat.status === "interrupting";
    if (action === "messages") {
      json(res, 200, { chatId: chat.chatId, status: chat.status, active, pendingToolCalls: chat.pendingToolCalls,
        lastError: chat.lastError, messages: await uiMessages(chat.chatId, chat.rows) });
      return;
    }
    if (!active || !input) {
      res.writeHead(204).end();
      return;
    }
    streamAction(res, executor, { kind: "turn", chatId: chat.chatId, inputRowId: input.rowId, cursor: input.rowId, knownCalls: [] }, signal);
    return;
  }
  json(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: `${method} is not served here` } });
}

export interface UiChatHandler {
  /** True for the endpoint's paths. */
  matches(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse, identity: Identity): void;
}

export function createUiChatHandler(pgl: PostGraphileInstance): UiChatHandler {
  return {
    matches: (req) => ROUTE.test(req.url ?? ""),
    handle(req, res, identity) {
      if (identity.kind !== "user") {
        json(res, 401, { error: { code: "UNAUTHENTICATED", message: "send Authorization: Bearer <token>" } });
        return;
      }
      const aborted = new AbortController();
      res.on("close", () => aborted.abort());
      route(req, res, executorFor(pgl, req, res), aborted.signal).catch((error: unknown) => {
        if (res.headersSent) return;
        if (error instanceof GraphQLRefusal) return refuse(res, error);
        logger.error({ err: error }, "useChat request failed");
        json(res, 500, { error: { code: "INTERNAL", message: "the request failed" } });
      });
    },
  };
}
