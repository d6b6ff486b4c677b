// Stop hooks in the loop: when a turn is about to finish (a final answer
// or a committed candidate), every enabled hook is called in name order with the turn and, for a structured
// request, its request id and current candidate. A non-blank `model_context` continues the turn, at most once per
// user request: the count lives in turn_progress.hook_continuations, so a restart cannot reset it. The
// continuation is one commit_step: a model-only control row (CONTROL_PREFIX, so it belongs to the turn), the
// optional user-visible notice, and the progress {"hook_continuation": true, "invalidate_candidate": ...} that
// durably discards the candidate, so only a later candidate can close the turn. Any failure fails closed.
//
// Delivery is at least once: a runner that dies during the call (or before its commit) leaves nothing durable, and
// the next runner calls the hooks again. Every write is fenced, so a runner that lost its fence while awaiting a
// hook writes nothing.
import type pg from "pg";
import type { Logger } from "../../src/log.ts";
import { callStopHook, type StopHook } from "../../src/hooks/index.ts";
import { CONTROL_PREFIX, FINALIZER_TOOL_NAME } from "../../src/structured/finalizer.ts";
import { fault, type Faults } from "../faults.ts";
import { loadStopHookRows } from "./config.ts";
import { ExactJson } from "./structured.ts";
import type { Transitions } from "./transitions.ts";

export type StopHookDecision =
  /** No hook asked to continue (or the one continuation was used): finish the turn. */
  | { kind: "finish" }
  /** The continuation is committed: the loop goes on. */
  | { kind: "continue" }
  /** Fail closed: finish_error with kind hook_failed. */
  | { kind: "failed"; message: string }
  /** The run was stopped (interrupt, lost lease, shutdown) while a hook was called; nothing was written. */
  | { kind: "stopped" };

export interface StopHookContext {
  pool: pg.Pool;
  tx: Transitions;
  log: Logger;
  faults: Faults;
  signal: AbortSignal;
  /** The newest config version the run has seen (config.ts); null: read the hooks. */
  configVersion?: bigint | null;
}

interface TurnRow {
  id: string;
  input_message_id: string | null;
  steps: number;
  hook_continuations: number;
  candidate_present: boolean;
  candidate_text: string | null;
  request_id: string | null;
  last_text: string | null;
}

export async function loadStopHooks(pool: pg.Pool, seen: bigint | null = null): Promise<(StopHook | { name: string; secret: null })[]> {
  const rows = await loadStopHookRows(pool, seen);
  return rows.map((r) => r.secret == null ? { name: r.name, secret: null }
    : { id: r.id, name: r.name, url: r.url, timeoutMs: r.timeout_ms, secret: r.secret });
}

/** The request body: exact JSON text, with the candidate embedded as its stored text (never through float64). */
export function hookPayload(chatId: string, turn: TurnRow): string {
  const exact = new ExactJson();
  return exact.stringify({
    type: "stop",
    chat_id: chatId,
    turn: { id: turn.id, input_message_id: turn.input_message_id, steps: turn.steps, hook_continuations: turn.hook_continuations },
    structured_output: turn.request_id == null ? null : {
      request_id: turn.request_id,
      candidate: turn.candidate_present && turn.candidate_text != null ? exact.placeholder(turn.candidate_text) : null,
    },
    last_assistant_text: turn.last_text,
  });
}

export async function runStopHooks(ctx: StopHookContext): Promise<StopHookDecision> {
  const hooks = await loadStopHooks(ctx.pool, ctx.configVersion ?? null);
  if (hooks.length === 0) return { kind: "finish" };
  const chatId = ctx.tx.fence.chatId;
  const { rows } = await ctx.pool.query<TurnRow>(
    `select t.id, t.input_message_id, t.steps, t.hook_continuations, t.candidate_present,
            t.candidate_value::text as candidate_text, r.id as request_id,
            (select string_agg(e.p ->> 'text', '' order by e.o) from chat_public.chat_messages m,
                    jsonb_array_elements(m.content) with ordinality as e(p, o)
             where m.id = (select max(x.id) from chat_public.chat_messages x
                           where x.chat_id = $1 and x.id >= coalesce(t.input_message_id, 0) and x.role = 'assistant' and x.kind = 'message' and not x.deleted
                             and x.visibility in ('model', 'both') and x.content @> '[{"type": "text"}]')
               and e.p ->> 'type' = 'text') as last_text
     from chat_private.turn_progress t
     left join chat_public.structured_output_requests r on r.id = t.structured_output_request_id and r.status = 'pending'
     where t.chat_id = $1 and t.finished_at is null`, [chatId]);
  const turn = rows[0];
  if (turn == null) return { kind: "finish" };
  const body = hookPayload(chatId, turn);
  const contexts: string[] = [];
  const notices: string[] = [];
  for (const hook of hooks) {
    if (hook.secret == null) return { kind: "failed", message: `stop hook ${hook.name} has no signing secret` };
    const result = await callStopHook(hook, body, ctx.signal);
    await fault(ctx.faults, "during_hook_call");
    if (ctx.signal.aborted) return { kind: "stopped" };
    if (!result.ok) return { kind: "failed", message: result.error };
    if (result.answer.modelContext != null) contexts.push(result.answer.modelContext);
    if (result.answer.userMessage != null) notices.push(result.answer.userMessage);
  }
  const continuing = contexts.length > 0 && turn.hook_continuations === 0;
  if (contexts.length > 0 && !continuing) {
    ctx.log.info({ hook_continuations: turn.hook_continuations }, "a stop hook asked to continue again; the turn's one continuation is used");
  }
  const rowsToCommit: object[] = [];
  if (continuing) {
    const again = turn.candidate_present
      ? ` The structured output you submitted earlier was discarded: when you are done, call ${FINALIZER_TOOL_NAME} again with the final value.`
      : "";
    rowsToCommit.push({ role: "user", visibility: "model", kind: "control",
      content: [{ type: "text", text: `${CONTROL_PREFIX}A stop hook asks you to continue before the turn ends:\n${contexts.join("\n\n")}${again}` }] });
  }
  for (const notice of notices) {
    rowsToCommit.push({ role: "assistant", visibility: "user", kind: "control", content: [{ type: "text", text: notice }] });
  }
  if (rowsToCommit.length === 0) return { kind: "finish" };
  const progress = continuing ? { hook_continuation: true, invalidate_candidate: turn.candidate_present } : {};
  await ctx.tx.commitStepJson(JSON.stringify(rowsToCommit), JSON.stringify(progress));
  if (continuing) ctx.log.info({ invalidated: turn.candidate_present }, "a stop hook continued the turn");
  return continuing ? { kind: "continue" } : { kind: "finish" };
}
