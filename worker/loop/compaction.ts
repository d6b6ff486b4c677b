// Compaction: when the newest step's prompt reached the model config's threshold
// (compaction_threshold_percent of context_limit, default 70 %), or a client asked (compactChat), the runner asks
// the same model for a summary of the model-visible history and commits it with compact_history: one fenced
// transaction that marks the originals compressed (they stay in the transcript; receipts are untouched), inserts
// the model-only summary and a client-visible marker, and carries the open turn's input over verbatim. Prompts then
// start at the newest summary (history.ts). turn_progress is not touched, so step, repair, continuation and
// candidate counts survive.
//
// It runs only between steps (no call waits for its result), from the loop, so the summary never splits a tool
// call from its result. A failed summary call is logged and the step goes on uncompacted: compaction saves
// context, it never fails a turn (a manual request stays set and is tried again before the next step).
import type pg from "pg";
import type { Logger } from "../../src/log.ts";
import { streamStep, type ChatPrompt, type ModelConfig, type ModelRuntime } from "../../src/providers/index.ts";
import { CONTROL_PREFIX } from "../../src/structured/finalizer.ts";
import type { Transitions } from "./transitions.ts";
import type { CompactionCheck } from "./types.ts";

/** The summary call's instructions. The scripted provider recognises this prefix (its deterministic summary mode). */
export const SUMMARY_REQUEST_PREFIX = `${CONTROL_PREFIX}summarize`;
const SUMMARY_INSTRUCTIONS = `${SUMMARY_REQUEST_PREFIX}: you are compacting a conversation between a user and an AI agent. ` +
  "Write a concise summary that lets the agent continue the work without the original messages: the user's goals and " +
  "constraints, decisions made, files and tools used with their important results, and what remains to be done. " +
  "Do not call tools. Answer with the summary text only.";
/** The summary row starts with the control prefix so that it never reads as a new user input. */
export const SUMMARY_HEADER = `${CONTROL_PREFIX}Summary of the earlier conversation (it replaces those messages):\n`;
const SUMMARY_MAX_CHARS = 64 * 1024;

/** The compaction columns of the turn-state statement (history.ts loadTurnState). */
export interface CompactionRow {
  requested: boolean;
  context_limit: number;
  threshold: number;
  tokens: string | null;
  up_to: string | null;
}

/** Whether the history is due for compaction; null: the chat or its model config is gone. */
export function compactionDue(row: CompactionRow | null): CompactionCheck {
  if (row == null) return { due: false, source: "automatic", contextTokens: null, contextLimit: 0, thresholdPercent: 100, upToMessageId: null };
  return withTokens({
    due: false,
    source: row.requested ? "manual" : "automatic",
    contextTokens: null,
    contextLimit: row.context_limit,
    thresholdPercent: row.threshold,
    upToMessageId: row.up_to,
  }, row.tokens == null ? null : Number(row.tokens));
}

/** The check with the input tokens of the newest assistant step: after loading, or after a step not yet re-read
 * (history.ts continueTurn). */
export function withTokens(check: CompactionCheck, tokens: number | null): CompactionCheck {
  const automatic = tokens != null && tokens * 100 >= check.contextLimit * check.thresholdPercent;
  return { ...check, contextTokens: tokens, due: check.upToMessageId != null && (check.source === "manual" || automatic) };
}

export interface CompactionContext {
  pool: pg.Pool;
  tx: Transitions;
  log: Logger;
  config: ModelConfig;
  runtime: ModelRuntime;
  signal: AbortSignal;
  /** The model-visible history the next step would send (history.ts). */
  prompt: ChatPrompt;
  /** Read with the history, in the same snapshot. */
  check: CompactionCheck;
}

/** Compacts when due (the check comes from the turn-state statement). True when the history changed (the caller re-reads it). */
export async function maybeCompact(ctx: CompactionContext): Promise<boolean> {
  const check = ctx.check;
  if (!check.due || check.upToMessageId == null) return false;
  const prompt: ChatPrompt = [
    { role: "system", content: [{ type: "text", text: SUMMARY_INSTRUCTIONS }] },
    ...ctx.prompt.filter((m) => m.role !== "system"),
    { role: "user", content: [{ type: "text", text: `${CONTROL_PREFIX}Summarize the conversation above now.` }] },
  ];
  const result = await streamStep(ctx.config, { prompt, tools: [], abortSignal: ctx.signal }, ctx.runtime);
  if (ctx.signal.aborted) return false;
  const summary = result.parts.flatMap((p) => p.type === "text" ? [p.text] : []).join("").trim();
  if (result.finish !== "stop" || summary === "") {
    ctx.log.warn({ finish: result.finish, kind: result.error?.kind, source: check.source }, "summary call failed; the step goes on uncompacted");
    return false;
  }
  const usagePercent = check.contextTokens == null ? null : Math.round((check.contextTokens * 100) / check.contextLimit);
  const marker = check.source === "manual"
    ? "Earlier messages were summarized on request; the model now sees a summary instead of them."
    : `Earlier messages were summarized automatically (the prompt reached ${usagePercent ?? "?"} % of the context limit; threshold ${check.thresholdPercent} %).`;
  await ctx.tx.compactHistory(SUMMARY_HEADER + summary.slice(0, SUMMARY_MAX_CHARS), check.upToMessageId, marker,
    { ...result.usage, source: check.source, context_tokens: check.contextTokens, context_limit_tokens: check.contextLimit });
  ctx.log.info({ source: check.source, context_tokens: check.contextTokens, up_to: check.upToMessageId }, "history compacted");
  return true;
}
