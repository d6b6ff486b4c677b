// What the next step needs, read in one snapshot: the chat, its open turn, and the model-visible history turned
// into a provider prompt. It also answers "where is this turn?": calls of the last assistant step that still
// wait for a result (a worker may have crashed between the assistant commit and the tool results), or a final
// assistant answer whose turn was never finished.
import type pg from "pg";
import type {
  AssistantPart,
  ChatMessage,
  ChatPrompt,
  JSONObject,
  JSONValue,
  ReplayMetadata,
  TextPart,
  ToolResultPart,
} from "../../src/providers/index.ts";
import { capOutput, type DynamicToolDeclaration } from "../../src/tools/index.ts";
import { compactionDue, withTokens, type CompactionRow } from "./compaction.ts";
import type { PendingCall, StoredMessage, TurnState } from "./types.ts";

interface Row {
  id: string;
  role: ChatMessage["role"];
  content: StoredPart[];
  provider_metadata: { parts?: Record<string, ReplayMetadata>; args_raw?: Record<string, string> } | null;
  finish: { continue?: boolean } | null;
  /** A tool result a client submitted (absent on the worker's own rows and on rows of an earlier release). */
  by_client?: boolean;
}

type StoredPart = { type: string; [key: string]: unknown };

function textParts(content: StoredPart[]): TextPart[] {
  return content.filter((p) => p.type === "text" && typeof p.text === "string").map((p) => ({ type: "text", text: p.text as string }));
}

function toolResult(p: StoredPart): ToolResultPart {
  return {
    type: "tool-result",
    tool_call_id: String(p.tool_call_id),
    tool_name: String(p.tool_name),
    result: (p.result ?? null) as JSONValue,
    is_error: p.is_error === true,
    ...(p.provider_executed === true ? { provider_executed: true } : {}),
  };
}

function assistantParts(row: Row): AssistantPart[] {
  const parts: AssistantPart[] = [];
  row.content.forEach((p, index) => {
    const replay = row.provider_metadata?.parts?.[String(index)];
    const withReplay = replay != null ? { replay } : {};
    if ((p.type === "text" || p.type === "reasoning") && typeof p.text === "string") {
      parts.push({ type: p.type, text: p.text, ...withReplay });
    } else if (p.type === "tool-call") {
      // The exact provider text when it was kept (jsonb may reorder keys); else the stored value.
      const raw = row.provider_metadata?.args_raw?.[String(index)];
      parts.push({
        type: "tool-call",
        tool_call_id: String(p.tool_call_id),
        tool_name: String(p.tool_name),
        args: raw ?? JSON.stringify(p.args ?? {}),
        ...(p.provider_executed === true ? { provider_executed: true } : {}),
        ...withReplay,
      });
    } else if (p.type === "tool-result") {
      parts.push({ ...toolResult(p), ...withReplay });
    }
  });
  return parts;
}

const UNANSWERED = "the call was not executed (the turn ended before it ran)";

/** The turn-state function's JSON (sql/130_turn_state.sql). */
export interface TurnStateRow {
  chat: ChatRow | null;
  turn: TurnRow | null;
  history: Row[];
  compaction: CompactionRow | null;
  config_version: string;
}

/** The statement that reads a chat's turn state in one snapshot (sql/130_turn_state.sql), one round trip. */
export async function loadTurnState(pool: pg.Pool, chatId: string, resultCapBytes: number): Promise<TurnState> {
  // Named: each pooled connection parses and plans this statement once.
  const { rows } = await pool.query<{ state: TurnStateRow }>({
    name: "chatd_turn_state", text: "select chat_private.turn_state($1) as state", values: [chatId] });
  return turnStateFrom(rows[0]?.state, resultCapBytes);
}

/** `resultCapBytes`: the deployment's tool result cap (CHATD_TOOL_RESULT_CAP_BYTES), applied to the results clients
 * submitted; the worker's own tools' results were cut when they ran. */
export function turnStateFrom(state: TurnStateRow | undefined, resultCapBytes: number): TurnState {
  const c = state?.chat;
  if (c == null) throw Object.assign(new Error("chat not found"), { code: "CHNTF" });
  const turn = state!.turn;
  const turnStart = turn?.input_message_id != null ? BigInt(turn.input_message_id) : 0n;
  return {
    chat: {
      id: c.id, status: c.status, modelConfigId: c.model_config_id, workspace: c.workspace,
      dynamicTools: c.dynamic_tools, planMode: c.plan_mode, parentChatId: c.parent_chat_id, mcpServerIds: c.mcp_server_ids,
    },
    ...assemble(state!.history, turnStart, resultCapBytes),
    steps: turn?.steps ?? 0,
    structured: turn?.request_id != null && turn.schema_text != null ? {
      requestId: turn.request_id, schemaText: turn.schema_text, rejectedBatches: turn.rejected_batches,
      valueRejected: turn.value_rejected, candidatePresent: turn.candidate_present,
    } : null,
    compaction: compactionDue(state!.compaction),
    configVersion: BigInt(state!.config_version),
  };
}

/** The state a re-read would return after `rows` (an assistant step and its results) are committed, without the
 * round trip: the rows are turned into prompt messages exactly as loadTurnState turns stored rows, and the
 * compaction check sees the step's input tokens. The chat, the structured request and the config version are those
 * of `state`: the step changed none of them (an interrupt or edit reaches the run through its listener). */
export function continueTurn(state: TurnState, rows: StoredMessage[]): TurnState {
  // The worker's own rows: no client result among them, so no cap to apply.
  const tail = assemble(rows.map((row) => ({
    id: "0", role: row.role, content: row.content as StoredPart[],
    provider_metadata: (row.internals?.provider_metadata ?? null) as Row["provider_metadata"],
    finish: (row.internals?.finish ?? null) as Row["finish"],
  })), 0n, Number.POSITIVE_INFINITY);
  const usage = rows.findLast((row) => row.role === "assistant")?.usage as { inputTokens?: unknown } | undefined;
  const tokens = typeof usage?.inputTokens === "number" ? usage.inputTokens : state.compaction.contextTokens;
  return {
    ...state,
    prompt: [...state.prompt, ...tail.prompt],
    pending: tail.pending,
    answered: tail.answered,
    steps: state.steps + rows.filter((row) => row.role === "assistant").length,
    compaction: withTokens(state.compaction, tokens),
  };
}

interface ChatRow {
  id: string;
  status: string;
  model_config_id: string;
  workspace: string | null;
  dynamic_tools: DynamicToolDeclaration[];
  plan_mode: boolean;
  parent_chat_id: string | null;
  mcp_server_ids: string[];
}

interface TurnRow {
  input_message_id: string | null;
  steps: number;
  request_id: string | null;
  schema_text: string | null;
  rejected_batches: number;
  value_rejected: boolean;
  candidate_present: boolean;
}

/** A client's tool result as the model sees it: at most the cap, then the note capOutput writes for every tool. The
 * transcript keeps what the client sent. */
function cappedClientResult(part: ToolResultPart, capBytes: number): ToolResultPart {
  const { result } = capOutput({ result: part.result, isError: part.is_error }, capBytes);
  return { ...part, result: result as JSONValue };
}

/** History rows → prompt. Unanswered calls of earlier turns get a synthetic error result (providers refuse a
 * dangling call); those of the current turn are returned as pending work instead. Tool results a client submitted
 * are cut to `clientResultCapBytes`. */
export function assemble(rows: Row[], turnStart: bigint, clientResultCapBytes: number):
  { prompt: ChatPrompt; pending: PendingCall[]; answered: boolean } {
  const prompt: ChatPrompt = [];
  const answeredIds = new Set<string>();
  for (const row of rows) {
    for (const p of row.content) if (p.type === "tool-result") answeredIds.add(String(p.tool_call_id));
  }
  let pending: PendingCall[] = [];
  let answered = false;
  for (const row of rows) {
    const inTurn = BigInt(row.id) >= turnStart;
    switch (row.role) {
      case "system":
      case "user": {
        const content = textParts(row.content);
        if (content.length > 0) prompt.push({ role: row.role, content });
        if (inTurn) {
          pending = [];
          answered = false;
        }
        break;
      }
      case "assistant": {
        const content = assistantParts(row);
        const open = content.filter((p): p is Extract<AssistantPart, { type: "tool-call" }> =>
          p.type === "tool-call" && p.provider_executed !== true && !answeredIds.has(p.tool_call_id));
        prompt.push({ role: "assistant", content });
        if (inTurn) {
          pending = open.map((p) => ({ tool_call_id: p.tool_call_id, tool_name: p.tool_name, args: p.args }));
          const anyCall = content.some((p) => p.type === "tool-call" && p.provider_executed !== true);
          answered = !anyCall && row.finish?.continue !== true;
        } else if (open.length > 0) {
          prompt.push({ role: "tool", content: open.map((p) => ({
            type: "tool-result", tool_call_id: p.tool_call_id, tool_name: p.tool_name,
            result: { error: UNANSWERED } as JSONObject, is_error: true,
          })) });
        }
        break;
      }
      case "tool": {
        const content = row.content.filter((p) => p.type === "tool-result").map(toolResult)
          .map((p) => row.by_client === true ? cappedClientResult(p, clientResultCapBytes) : p);
        if (content.length > 0) prompt.push({ role: "tool", content });
        if (inTurn) {
          const ids = new Set(content.map((p) => p.tool_call_id));
          pending = pending.filter((p) => !ids.has(p.tool_call_id));
          answered = false;
        }
        break;
      }
    }
  }
  return { prompt, pending, answered };
}
