// The AI SDK UI message stream endpoint (`useChat` with `DefaultChatTransport({ api: "<chatd>/api/chat" })`):
//   POST /api/chat                 send (or create, edit, answer tool calls) and stream the turn
//   GET  /api/chat/:id/stream      resume: replay the running turn from chatd's durable transcript, then live
//                                  (204 when no turn runs)
//   GET  /api/chat/:id/messages    the transcript as UI messages, for a client that loads a chat, in pages of at
//                                  most CHATD_TRANSCRIPT_PAGE_BYTES: `next` (and a Link rel=next) is `?after=`
//   POST /api/chat/:id/stop        interrupt the running turn (a structured request gets a canceled receipt)
//   POST /api/response-format/check  the server's own response_format check, for forms that check before sending
// A dropped connection never interrupts: turns are durable and a reload resumes them. Streams are SSE with
// `x-vercel-ai-ui-message-stream: v1` (the SDK's pipeUIMessageStreamToResponse).
import type { IncomingMessage, ServerResponse } from "node:http";
import { UI_MESSAGE_STREAM_HEADERS } from "ai";
import type { PostGraphileInstance } from "postgraphile";
import { validateResponseFormat } from "../../structured/index.ts";
import { logger } from "../../log.ts";
import type { Identity } from "../auth.ts";
import { badRequest, HttpError, sendError, sendJson, sendJsonText } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import { BoundedSender, type StreamLease, type StreamRegistry } from "../http/streams.ts";
import { performChatRequest, type Action } from "./actions.ts";
import { executorFor, GraphQLRefusal, type Executor } from "./graphql.ts";
import { latestInputId, parseCursor, readHead, readPage } from "./history.ts";
import { BODY_LIMITS, parseChatRequest } from "./request.ts";
import { streamTurn, type ChunkSink } from "./turn-stream.ts";

const KEEP_ALIVE_MS = 15_000;
const ROUTE = /^\/api\/(?:chat(?:\/([^/?]+)(?:\/(stream|messages|stop))?)?|response-format\/check)\/?(?:\?.*)?$/;
const INTERRUPT = `mutation($id: UUID!) { interruptChat(input: {chatId: $id}) { result { status } } }`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DELETE = `mutation($id: UUID!) { deleteChat(input: {chatId: $id}) { result } }`;

/** Starts the SSE response (the AI SDK's UI message stream: `data: <chunk>` lines, then `data: [DONE]`) and runs
 * `produce` on a sink that waits for the client to read; the lease is released when the stream ends. */
function stream(res: ServerResponse, sender: BoundedSender, lease: StreamLease, produce: (sink: ChunkSink) => Promise<void>): void {
  res.writeHead(200, UI_MESSAGE_STREAM_HEADERS);
  const sink: ChunkSink = {
    write: (chunk) => void sender.write(`data: ${JSON.stringify(chunk)}\n\n`),
    drained: () => sender.drained(),
  };
  const keepAlive = setInterval(() => sender.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  produce(sink).catch((error: unknown) => {
    if (!(error instanceof HttpError)) logger.warn({ err: error }, "useChat stream failed");
    sink.write({ type: "error", errorText: error instanceof HttpError ? error.message : "the chat stream was interrupted; resume it" });
  }).finally(() => {
    clearInterval(keepAlive);
    lease.release();
    // A dropped turn goes on (turns are durable); a resume with a fresh token picks it up.
    const expired = sender.ended === "token-expired"
      ? `data: ${JSON.stringify({ type: "error", errorText: "the token expired; resume the stream with a fresh token" })}\n\n` : "";
    sender.end(`${expired}data: [DONE]\n\n`);
  });
}

function streamAction(res: ServerResponse, sender: BoundedSender, lease: StreamLease, executor: Executor, action: Action): void {
  stream(res, sender, lease, async (sink) => {
    if (action.kind === "queued") {
      sink.write({ type: "start", messageMetadata: { chatId: action.chatId } });
      sink.write({ type: "data-queued", data: { chatId: action.chatId, queuedMessageId: action.queuedMessageId,
        structuredOutputRequestId: action.structuredOutputRequestId }, transient: true });
      sink.write({ type: "finish" });
      return;
    }
    await streamTurn(sink, { executor, chatId: action.chatId, inputRowId: action.inputRowId, cursor: action.cursor,
      knownCalls: action.knownCalls, signal: sender.signal });
  });
}

interface Context {
  executor: Executor;
  identity: Extract<Identity, { kind: "user" }>;
  streams: StreamRegistry;
  /** The cap on one page of GET /api/chat/:id/messages (CHATD_TRANSCRIPT_PAGE_BYTES). */
  transcriptPageBytes: number;
}

/** A stream slot for the caller (429 when it holds its cap), taken before the request has any effect. */
function openStream(res: ServerResponse, context: Context): { sender: BoundedSender; lease: StreamLease } {
  const lease = context.streams.acquire(context.identity.userId);
  const sender = new BoundedSender(res, { sendDeadlineMs: context.streams.limits.sendDeadlineMs,
    expiresAtMs: context.identity.expiresAt * 1000 });
  return { sender, lease };
}

async function route(req: IncomingMessage, res: ServerResponse, context: Context): Promise<void> {
  const { executor } = context;
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
    const { sender, lease } = openStream(res, context);
    try {
      streamAction(res, sender, lease, executor, await performChatRequest(executor, request));
    } catch (error) {
      lease.release();
      throw error;
    }
    return;
  }
  if (id !== undefined && !UUID.test(id)) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
  if (id !== undefined && action === "stop" && method === "POST") {
    const { interruptChat } = await executor.run<{ interruptChat: { result: { status: string } } }>(INTERRUPT, { id });
    sendJson(res, 200, { status: interruptChat.result.status.toLowerCase() });
    return;
  }
  // The chat deleted for good (sql/160 delete_chat): a running turn is stopped first.
  if (id !== undefined && action === undefined && method === "DELETE") {
    const { deleteChat } = await executor.run<{ deleteChat: { result: string } }>(DELETE, { id });
    sendJson(res, 200, { chatId: deleteChat.result, deleted: true });
    return;
  }
  if (id !== undefined && (action === "stream" || action === "messages") && method === "GET") {
    const head = await readHead(executor, id);
    if (!head) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
    const active = head.status === "running" || head.status === "interrupting";
    if (action === "messages") {
      const cursor = parseCursor(new URL(req.url ?? "", "http://chatd").searchParams.get("after"));
      const page = await readPage(executor, head.chatId, cursor, context.transcriptPageBytes);
      if (!page) throw new GraphQLRefusal("chat not found", "NOT_FOUND");
      const link: Record<string, string> = page.next === null ? {} : { link: `</api/chat/${head.chatId}/messages?after=${page.next}>; rel="next"` };
      // `next` last: the body is the head's JSON with the page's messages spliced in.
      const start = JSON.stringify({ chatId: head.chatId, status: head.status, active, pendingToolCalls: head.pendingToolCalls,
        lastError: head.lastError }).slice(0, -1);
      sendJsonText(res, 200, `${start},"messages":${page.messagesJson},"next":${JSON.stringify(page.next)}}`, link);
      return;
    }
    const input = active ? await latestInputId(executor, head.chatId) : null;
    if (input === null) {
      res.writeHead(204).end();
      return;
    }
    const { sender, lease } = openStream(res, context);
    streamAction(res, sender, lease, executor, { kind: "turn", chatId: head.chatId, inputRowId: input, cursor: input, knownCalls: [] });
    return;
  }
  throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} is not served here`);
}

export interface UiChatHandler {
  /** True for the endpoint's paths. */
  matches(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse, identity: Identity): void;
}

export function createUiChatHandler(pgl: PostGraphileInstance, streams: StreamRegistry, transcriptPageBytes: number): UiChatHandler {
  return {
    matches: (req) => ROUTE.test(req.url ?? ""),
    handle(req, res, identity) {
      if (identity.kind !== "user") {
        sendError(res, new HttpError(401, "UNAUTHENTICATED", "send Authorization: Bearer <token>"));
        return;
      }
      route(req, res, { executor: executorFor(pgl, req, res), identity, streams, transcriptPageBytes }).catch((error: unknown) => sendError(res, error));
    },
  };
}
