// The /v1 reads and writes, each one transaction as the caller (session.ts), and the wait for a receipt: LISTEN on
// the chat's channel first, then read, then read again at each notification, so a receipt committed between the
// read and the wait is never missed.
import type pg from "pg";
import { chatChannel } from "../../channels.ts";
import type { ChatListener } from "../listener.ts";
import { isOpen, type ResponseRow } from "./response-object.ts";
import type { CreateResponse } from "./responses-request.ts";
import { asUser } from "./session.ts";

export interface Store {
  pool: pg.Pool;
  listener: ChatListener;
}

// The three writes below answer with the new Response as their own transaction leaves it: read after the commit, a
// fast worker could already have finished the turn, and a `background` create answered `completed` where the
// OpenAI API answers `queued` or `in_progress` (test/openai/python.test.ts saw it).

/** A new Response (a new chat), as created. */
export async function createResponse(store: Store, userId: string, request: CreateResponse, idempotencyKey: string | null): Promise<ResponseRow> {
  return asUser(store.pool, userId, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      "select chat_public.openai_create_response($1, $2, $3, $4, $5, $6, $7, $8, $9) as id",
      [JSON.stringify(request.content), request.envelope, request.model, request.workspace, JSON.stringify(request.tools), request.background,
        JSON.stringify(request.echo), request.bodySha256, idempotencyKey]);
    return created(client, rows[0]!.id);
  });
}

/** A continuation (`previous_response_id`): answers the previous Response's function calls; the new Response. */
export async function continueResponse(store: Store, userId: string, request: CreateResponse, idempotencyKey: string | null): Promise<ResponseRow> {
  return asUser(store.pool, userId, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      "select chat_public.openai_continue_response($1, $2, $3, $4, $5, $6, $7) as id",
      [request.previous, JSON.stringify(request.results), JSON.stringify(request.tools), request.background,
        JSON.stringify(request.echo), request.bodySha256, idempotencyKey]);
    return created(client, rows[0]!.id);
  });
}

/** A follow-up (`previous_response_id` with new input): a new message, and request, in the previous Response's chat. */
export async function followUpResponse(store: Store, userId: string, request: CreateResponse, idempotencyKey: string | null): Promise<ResponseRow> {
  return asUser(store.pool, userId, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      "select chat_public.openai_follow_up_response($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) as id",
      [request.previous, JSON.stringify(request.content), request.envelope, request.model, request.workspace,
        JSON.stringify(request.tools), request.background, JSON.stringify(request.echo), request.bodySha256, idempotencyKey]);
    return created(client, rows[0]!.id);
  });
}

async function responseRow(client: pg.ClientBase, id: string): Promise<ResponseRow | null> {
  const { rows } = await client.query<ResponseRow>("select * from chat_public.openai_response($1)", [id]);
  return rows[0] ?? null;
}

/** The Response a write of the caller's just made (or found by its idempotency key): there is one. */
async function created(client: pg.ClientBase, id: string): Promise<ResponseRow> {
  const row = await responseRow(client, id);
  if (row === null) throw new Error(`the Response ${id} written in this transaction cannot be read`);
  return row;
}

/** `id` is a Response's uuid: a request's (its first Response) or a round's. */
export async function readResponse(store: Store, userId: string, id: string): Promise<ResponseRow | null> {
  return asUser(store.pool, userId, (client) => responseRow(client, id));
}

/** False when the Response is not the caller's. */
export async function cancelResponse(store: Store, userId: string, id: string): Promise<boolean> {
  return asUser(store.pool, userId, async (client) => {
    const { rows } = await client.query<{ ok: boolean }>("select chat_public.openai_cancel_response($1) as ok", [id]);
    return rows[0]!.ok;
  });
}

/**
 * The Response once it has its receipt or function calls, or as it stands when `waitMs` ran out (or the client
 * left: `signal`). Null when it is not the caller's.
 */
export async function waitForReceipt(store: Store, userId: string, id: string, chatId: string, waitMs: number,
  signal?: AbortSignal): Promise<ResponseRow | null> {
  const subscription = await store.listener.subscribe([chatChannel(chatId)]);
  const deadline = Date.now() + waitMs;
  try {
    for (;;) {
      const row = await readResponse(store, userId, id);
      if (!row || !isOpen(row) || Date.now() >= deadline || signal?.aborted) return row;
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => { timer = setTimeout(resolve, deadline - Date.now()); });
      const left = new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
      try {
        await Promise.race([subscription.next(), expired, left]);
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    await subscription.close();
  }
}
