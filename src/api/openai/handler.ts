// The OpenAI-compatible routes on the API port (docs/openai.md):
//   POST /v1/responses                create (Bearer <chatd token>; `background` returns at once, else at the receipt)
//   GET  /v1/responses/{id}           retrieve; `?stream=true&starting_after=N` replays the events after N, then live
//   POST /v1/responses/{id}/cancel    cancel, whatever the state; idempotent
//   POST /v1/chat/completions         synchronous structured answer, bounded wait
// Every statement runs as the token's user with the same functions and row-level security as GraphQL.
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { identify } from "../auth.ts";
import type { ChatListener } from "../listener.ts";
import { readJsonBody } from "./body.ts";
import { chatCompletion } from "./chat-completions.ts";
import { fromError, invalid, notFound, OpenAIError, type ParamDialect } from "./errors.ts";
import { isOpen, responseObject, responseUuidOf, type ResponseRow } from "./response-object.ts";
import { idempotencyKeyOf, parseCreateResponse } from "./responses-request.ts";
import { cancelResponse, continueResponse, createResponse, readResponse, waitForReceipt, type Store } from "./store.ts";
import { streamResponse } from "./stream.ts";

const ROUTE = /^\/v1\/(responses(?:\/([^/?]+)(\/cancel)?)?|chat\/completions)\/?(?:\?(.*))?$/;

/** How long a call without `background` waits for its receipt before answering with the Response as it stands. */
export const RESPONSES_WAIT_MS = 10 * 60_000;
/** How long cancel waits for the canceled receipt before answering with the Response as it stands. */
const CANCEL_WAIT_MS = 5_000;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export interface OpenAIHandlerOptions {
  pool: pg.Pool;
  listener: ChatListener;
  jwtSecret: string;
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

function sseSource(store: Store, userId: string, uuid: string, signal: AbortSignal) {
  return {
    waitForReceipt: (chatId: string) => waitForReceipt(store, userId, uuid, chatId, RESPONSES_WAIT_MS, signal),
  };
}

async function route(store: Store, userId: string, req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const [, path, rawId, cancel, query] = ROUTE.exec(req.url ?? "")!;
  const method = req.method ?? "GET";
  if (path === "chat/completions" && method === "POST") {
    send(res, 200, await chatCompletion(store, userId, await readJsonBody(req), signal, idempotencyKeyOf(req.headers["idempotency-key"])));
    return;
  }
  if (rawId === undefined && method === "POST") {
    const request = parseCreateResponse(await readJsonBody(req));
    const key = idempotencyKeyOf(req.headers["idempotency-key"]);
    const uuid = request.previous === null ? await createResponse(store, userId, request, key)
      : await continueResponse(store, userId, request, key);
    const row = await readResponse(store, userId, uuid);
    if (!row) throw notFound(uuid);
    if (request.stream) return streamResponse(res, row, sseSource(store, userId, uuid, signal), null);
    const done = request.background || !isOpen(row) ? row
      : await waitForReceipt(store, userId, uuid, row.chat_id, RESPONSES_WAIT_MS, signal);
    send(res, 200, responseObject(done ?? row));
    return;
  }
  if (rawId !== undefined && cancel === undefined && method === "GET") {
    const { stream, startingAfter } = streamQuery(query);
    const row = await retrieve(store, userId, decodeURIComponent(rawId));
    if (stream) return streamResponse(res, row, sseSource(store, userId, row.response_id, signal), startingAfter);
    send(res, 200, responseObject(row));
    return;
  }
  if (rawId !== undefined && cancel !== undefined && method === "POST") {
    const id = decodeURIComponent(rawId);
    const uuid = responseUuidOf(id);
    // Not the caller's: the read says whether it was deleted with its chat (SODEL) or never was.
    if (uuid === null || !await cancelResponse(store, userId, uuid)) await retrieve(store, userId, id);
    const row = await readResponse(store, userId, uuid);
    if (!row) throw notFound(id);
    const settled = await waitForReceipt(store, userId, uuid, row.chat_id, CANCEL_WAIT_MS, signal);
    send(res, 200, responseObject(settled ?? row));
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
        send(res, 401, new OpenAIError(401, message, { type: "authentication_error", code: "invalid_api_key" }).body());
        return;
      }
      const aborted = new AbortController();
      res.on("close", () => aborted.abort());
      route(store, identity.userId, req, res, aborted.signal).catch((error: unknown) => {
        if (res.headersSent) return;
        const refusal = fromError(error, dialect);
        send(res, refusal.status, refusal.body());
      });
    },
  };
}
