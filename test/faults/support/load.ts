// Load for the fault suite: structured requests whose turns take a few slow scripted steps (the scripted provider,
// not a real model), and the checks every fault test makes afterwards: one receipt per request, recoveries spent.
import { isConnectionError } from "../../../src/db/pool.ts";
import { asUser, text } from "../../support/chats.ts";
import type { TestDatabase } from "../../support/db.ts";

const SCHEMA = { type: "object", properties: { files: { type: "integer" } }, required: ["files"], additionalProperties: false };

/** A turn of three steps: a slow list_files call, a slow read, then the finalizer with a valid value. */
export function slowScript(delayMs: number): string {
  return JSON.stringify({ script: [
    { delay_ms: delayMs, tool_calls: [{ name: "list_files", args: { path: "." } }] },
    { delay_ms: delayMs, tool_calls: [{ name: "read_file", args: { path: "a.txt" } }] },
    { delay_ms: delayMs, tool_calls: [{ name: "coder_structured_output", args: { output: { files: 2 } } }] },
  ] });
}

/** Creates `count` chats whose first message is a structured request running `script`; returns their ids. */
export async function structuredChats(db: TestDatabase, user: string, count: number, script: string): Promise<string[]> {
  const format = JSON.stringify({ type: "json_schema", json_schema: { name: "listing", schema: SCHEMA } });
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    ids.push(await asUser(db, user, async (client) => {
      const { rows } = await client.query<{ chat_id: string }>(
        "select chat_id from chat_public.create_chat(content => $1, response_format => $2, workspace => 'ws')", [text(script), format]);
      return rows[0]!.chat_id;
    }));
  }
  return ids;
}

/** Polls `check` until it returns a value; a statement refused while the server is down counts as "not yet". */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (!isConnectionError(error)) throw error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function count(db: TestDatabase, sql: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) s`);
  return rows[0]!.n;
}

export interface Outcome {
  requests: number;
  pending: number;
  /** Requests whose receipt count is not exactly one. */
  notOneReceipt: number;
  succeeded: number;
  recoveries: number;
}

export async function outcome(db: TestDatabase): Promise<Outcome> {
  const { rows } = await db.pool.query<Outcome>(
    `select count(*)::int as requests, count(*) filter (where r.status = 'pending')::int as pending,
            count(*) filter (where (select count(*) from chat_public.chat_messages m
                                    where m.kind = 'receipt' and m.structured_output_request_id = r.id) <> 1)::int as "notOneReceipt",
            count(*) filter (where r.status = 'succeeded')::int as succeeded,
            (select coalesce(sum(t.recoveries), 0)::int from chat_private.turn_progress t) as recoveries
     from chat_public.structured_output_requests r`);
  return rows[0]!;
}

/** Waits until no request is pending (each has its receipt). */
export function allAnswered(db: TestDatabase, timeoutMs?: number): Promise<true> {
  return until("every request's receipt", async () =>
    (await count(db, "select 1 from chat_public.structured_output_requests where status = 'pending'")) === 0 || undefined, timeoutMs);
}

/** The time (ms) from `since` to the first assistant step committed after it: printed, never asserted. */
export async function firstStepAfter(db: TestDatabase, since: Date): Promise<number> {
  const at = await until("a step committed after the database came back", async () => {
    const { rows } = await db.pool.query<{ at: Date | null }>(
      "select min(created_at) as at from chat_public.chat_messages where role = 'assistant' and created_at > $1", [since]);
    return rows[0]?.at ?? undefined;
  });
  return at.getTime() - since.getTime();
}
