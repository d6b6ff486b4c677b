// The OpenAI-compatible routes on the API port (docs/openai.md):
//   POST /v1/responses                create (Bearer <chatd token>; `background` returns at once, else at the receipt)
//   GET  /v1/responses/{id}           retrieve; `?stream=true&starting_after=N` replays the events after N, then live
//   POST /v1/responses/{id}/cancel    cancel, whatever the state; idempotent
//   POST /v1/chat/completions         synchronous structured answer, bounded wait
// Every statement runs as the token's user with the same functions and row-level security as GraphQL.
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { SCHEMA_MAX_JSON_DEPTH } from "../../structured/caps.ts";
import { identify } from "../auth.ts";
import { sendJson } from "../http/errors.ts";
import { readJsonBody, type JsonBodyLimits } from "../http/json-body.ts";
import { BoundedSender, type StreamLease, type StreamRegistry } from "../http/streams.ts";
import type { ChatListener } from "../listener.ts";
import { MAX_REQUEST_BYTES } from "../preset.ts";
import { chatCompletion } from "./chat-completions.ts";
import { fromError, invalid, notFound, OpenAIError, type ParamDialect } from "./errors.ts";
import { isOpen, responseObject, responseUuidOf, type ResponseRow } from "./response-object.ts";
import { idempotencyKeyOf, parseCreateResponse } from "./responses-request.ts";
import { cancelResponse, continueResponse, createResponse, followUpResponse, readResponse, waitForReceipt, type Store } from "./store.ts";
import { streamResponse } from "./stream.ts";

const ROUTE = /^\/v1\/(responses(?:\/([^/?]+)(\/cancel)?)?|chat\/completions)\/?(?:\?(.*))?$/;

/** How long a call without `background` waits for its receipt before answering with the Response as it stands. */
export const RESPONSES_WAIT_MS = 10 * 60_000;
/** How long cancel waits for the canceled receipt before answering with the Response as it stands. */
const CANCEL_WAIT_MS = 5_000;

/** The shared body limits (http/json-body.ts): the request cap, and a nesting depth that fits the deepest schema
 * chatd accepts inside `text.format.schema` or `tools[i].parameters`, with room to spare. */
const BODY_LIMITS: Readonly<JsonBodyLimits> = Object.freeze({ maxBytes: MAX_REQUEST_BYTES, maxDepth: SCHEMA_MAX_JSON_DEPTH + 8 });

export interface OpenAIHandlerOptions {
  pool: pg.Pool;
  listener: ChatListener;
  jwtSecret: string;
  /** The server's stream caps, shared with /api/chat: an SSE Response holds one of the caller's slots. */
  streams: StreamRegistry;
}

interface Caller {
  userId: string;
  /** The token's exp (seconds): an open stream ends there. */
  expiresAt: number;
}

async function retrieve(store: Store, userId: string, id: string): Promise<ResponseRow> {
  const uuid = responseUuidOf(id);
  const row = uuid === null ? null : await readResponse(store, userId, uuid);
  if (!row) throw notFound(id);
  return row;
}

/** `?stream=true[&starting_after=N]` of a retrieve: N is a sequence_number the client already has. */
function streamQuery(query: string | undefined): { stream: boolean; startingAfter: number | null } {
  const params = new URLSearchParams(query ?? "");
  const stream = params.get("stream") === "true";
  const raw = params.get("starting_after");
  if (raw === null || raw === "") return { stream, startingAfter: null };
  if (!/^\d{1,9}$/.test(raw)) throw invalid("starting_after must be a non-negative integer", "starting_after");
  return { stream, startingAfter: Number(raw) };
}

type Context = { store: Store; streams: StreamRegistry; caller: Caller };

/** One of the caller's stream slots (429 when it holds its cap), taken before the request has any effect, and a
 * sender that drops a client that stops reading and ends the stream when the token expires. */
function openStream(res: ServerResponse, context: Context): { lease: StreamLease; sender: BoundedSender } {
  const lease = context.streams.acquire(context.caller.userId);
  return { lease, sender: new BoundedSender(res, { sendDeadlineMs: context.streams.limits.sendDeadlineMs,
    expiresAtMs: context.caller.expiresAt * 1000 }) };
}

/** Streams the Response's events in its slot; `load` reads the row once the slot is held. */
async function sse(res: ServerResponse, context: Context, load: () => Promise<ResponseRow>, startingAfter: number | null): Promise<void> {
  const { lease, sender } = openStream(res, context);
  try {
    const row = await load();
    await streamResponse(res, sender, row, {
      waitForReceipt: (chatId: string) => waitForReceipt(context.store, context.caller.userId, row.response_id, chatId,
        RESPONSES_WAIT_MS, sender.signal),
    }, startingAfter);
  } finally {
    lease.release();
  }
}

function pathId(rawId: string): string {
  try {
    return decodeURIComponent(rawId);
  } catch {
    throw invalid("the id in the path is not valid percent-encoding", null);
  }
}

async function route(context: Context, req: IncomingMessage, res: ServerResponse,
  signal: AbortSignal): Promise<void> {
  const { store, caller: { userId } } = context;
  const [, path, rawId, cancel, query] = ROUTE.exec(req.url ?? "")!;
  const method = req.method ?? "GET";
  if (path === "chat/completions" && method === "POST") {
    sendJson(res, 200, await chatCompletion(store, userId, await readJsonBody(req, BODY_LIMITS), signal, idempotencyKeyOf(req.headers["idempotency-key"])));
    return;
  }
  if (rawId === undefined && method === "POST") {
    const request = parseCreateResponse(await readJsonBody(req, BODY_LIMITS));
    const key = idempotencyKeyOf(req.headers["idempotency-key"]);
    const create = (): Promise<ResponseRow> => request.previous === null ? createResponse(store, userId, request, key)
      : request.results.length > 0 ? continueResponse(store, userId, request, key)
        : followUpResponse(store, userId, request, key);
    if (request.stream) return sse(res, context, create, null);
    const row = await create();
    const done = request.background || !isOpen(row) ? row
      : await waitForReceipt(store, userId, row.response_id, row.chat_id, RESPONSES_WAIT_MS, signal);
    sendJson(res, 200, responseObject(done ?? row));
    return;
  }
  if (rawId !== undefined && cancel === undefined && method === "GET") {
    const { stream, startingAfter } = streamQuery(query);
    const id = pathId(rawId);
    if (stream) return sse(res, context, () => retrieve(store, userId, id), startingAfter);
    const row = await retrieve(store, userId, id);
    sendJson(res, 200, responseObject(row));
    return;
  }
  if (rawId !== undefined && cancel !== undefined && method === "POST") {
    const id = pathId(rawId);
    const uuid = responseUuidOf(id);
    if (uuid === null) throw notFound(id);
    // Not the caller's: the read says whether it was deleted with its chat (SODEL) or never was.
    if (!await cancelResponse(store, userId, uuid)) await retrieve(store, userId, id);
    const row = await readResponse(store, userId, uuid);
    if (!row) throw notFound(id);
    const settled = await waitForReceipt(store, userId, uuid, row.chat_id, CANCEL_WAIT_MS, signal);
    sendJson(res, 200, responseObject(settled ?? row));
    return;
  }
  throw new OpenAIError(405, `${method} ${req.url ?? ""} is not served here`, { code: "method_not_allowed" });
}

export interface OpenAIHandler {
  matches(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

export function createOpenAIHandler(options: OpenAIHandlerOptions): OpenAIHandler {
  const store: Store = { pool: options.pool, listener: options.listener };
  return {
    matches: (req) => ROUTE.test(req.url ?? ""),
    handle(req, res) {
      const dialect: ParamDialect = req.url?.startsWith("/v1/chat/") ? "chat" : "responses";
      const identity = identify(options.jwtSecret, req.headers.authorization);
      if (identity.kind !== "user") {
        const message = identity.kind === "invalid" ? identity.reason : "send Authorization: Bearer <chatd token> (the SDK's api_key)";
        sendJson(res, 401, new OpenAIError(401, message, { type: "authentication_error", code: "invalid_api_key" }).body());
        return;
      }
      const aborted = new AbortController();
      res.on("close", () => aborted.abort());
      const caller = { userId: identity.userId, expiresAt: identity.expiresAt };
      route({ store, streams: options.streams, caller }, req, res, aborted.signal).catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const refusal = fromError(error, dialect);
        sendJson(res, refusal.status, refusal.body(), refusal.headers);
      });
    },
  };
}
