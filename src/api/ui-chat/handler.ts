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
import { badRequest, HttpError, sendError, sendJson } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import { performChatRequest, type Action } from "./actions.ts";
import { executorFor, GraphQLRefusal, type Executor } from "./graphql.ts";
import { latestInput, readChat, uiMessages } from "./history.ts";
import { BODY_LIMITS, parseChatRequest } from "./request.ts";
import { streamTurn } from "./turn-stream.ts";

const KEEP_ALIVE_MS = 15_000;
const ROUTE = /^\/api\/(?:chat(?:\/([^/?]+)\/(stream|messages|stop))?|response-format\/check)\/?(?:\?.*)?$/;
const INTERRUPT = `mutation($id: UUID!) { interruptChat(input: {chatId: $id}) { result { status } } }`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    throw badRequest("id", "(the chat id in the path) is not valid percent-encoding");
  }
  const method = req.method ?? "GET";
  if (req.url?.startsWith("/api/response-format/check") && method === "POST") {
    const body = await readJsonBody(req, BODY_LIMITS);
    const responseFormat = typeof body === "object" && body !== null ? (body as { responseFormat?: unknown }).responseFormat : undefined;
    if (typeof responseFormat !== "string") throw badRequest("responseFormat", "must be a string");
    const result = validateResponseFormat(responseFormat);
    sendJson(res, 200, result.ok ? { ok: true } : { ok: false, errors: result.errors });
    return;
  }
  if (id === undefined && method === "POST") {
    const request = parseChatRequest(await readJsonBody(req, BODY_LIMITS));
    streamAction(res, executor, await performChatRequest(executor, request), signal);
    return;
  }
  if (id !== undefined && !UUID.test(id)) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
  if (id !== undefined && action === "stop" && method === "POST") {
    const { interruptChat } = await executor.run<{ interruptChat: { result: { status: string } } }>(INTERRUPT, { id });
    sendJson(res, 200, { status: interruptChat.result.status.toLowerCase() });
    return;
  }
  if (id !== undefined && (action === "stream" || action === "messages") && method === "GET") {
    const chat = await readChat(executor, id);
    if (!chat) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
    const input = latestInput(chat.rows);
    const active = chat.status === "running" || chat.status === "interrupting";
    if (action === "messages") {
      sendJson(res, 200, { chatId: chat.chatId, status: chat.status, active, pendingToolCalls: chat.pendingToolCalls,
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
  throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} is not served here`);
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
        sendError(res, new HttpError(401, "UNAUTHENTICATED", "send Authorization: Bearer <token>"));
        return;
      }
      const aborted = new AbortController();
      res.on("close", () => aborted.abort());
      route(req, res, executorFor(pgl, req, res), aborted.signal).catch((error: unknown) => sendError(res, error));
    },
  };
}
