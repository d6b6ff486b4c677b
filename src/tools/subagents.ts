// Subagents: tools that create and drive child chats of the running chat. A child is an ordinary chat
// (owner, model config, workspace, plan mode and MCP servers of its parent; `parent_chat_id` set) run by the
// ordinary chat_run jobs; its results come back to the parent as tool results. Depth 1: only a root chat is
// offered these tools, and the SQL refuses a child that tries anyway (AGDEP). A child never receives a response
// format, so a parent's structured request (its schema, its finalizer) never reaches a child.
//
// Every write is a chat_private function that first checks this runner still holds the parent's lease.
// wait_agent holds the parent's worker slot and lease while it waits (the heartbeat keeps running), so the wait is
// bounded: 120 s by default, 600 s at most; past it the tool answers "still running" and the model may wait again.
// A deployment whose worker concurrency is 1 cannot run the child while its parent waits on it: the wait then ends
// at its bound. Use a concurrency of at least 2 where agents are used.
import { createHash } from "node:crypto";
import type pg from "pg";
import type { JSONObject, JSONValue } from "../providers/index.ts";
import { ToolError, type ToolDefinition, type ToolOutput } from "./types.ts";

export const WAIT_DEFAULT_S = 120;
export const WAIT_MAX_S = 600;
/** A missed notification (listen connection lost) delays a wait's wake-up by at most this. */
const RECHECK_MS = 2_000;
/** Bytes of a child's answer returned to the parent (the registry caps the whole result as well). */
const RESULT_CAP_BYTES = 16 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubagentContext {
  pool: pg.Pool;
  /** The parent chat (the running chat). */
  chatId: string;
  /** The parent's runner: every write is refused once it no longer holds the lease. */
  runnerId: string;
  /** LISTEN on a chat's channel (the worker's shared listener); resolves once listening. */
  subscribe: (chatId: string, onChange: () => void) => Promise<() => Promise<void>>;
}

export interface AgentState {
  agent_id: string;
  title: string | null;
  status: string;
  result?: string;
  error?: JSONValue;
}

const SUBAGENT_TOOL_NAMES = ["spawn_agent", "wait_agent", "message_agent", "interrupt_agent", "list_agents"] as const;
export const subagentToolNames: readonly string[] = SUBAGENT_TOOL_NAMES;

const text = (value: string): string => JSON.stringify([{ type: "text", text: value }]);
const ok = (result: JSONValue): ToolOutput => ({ result, isError: false });

function stringArg(args: JSONObject, name: string, required: boolean): string | undefined {
  const value = args[name];
  if (value == null && !required) return undefined;
  if (typeof value !== "string" || value.trim() === "") throw new ToolError(`${name} must be a non-empty string`);
  return value;
}

function agentId(args: JSONObject, required: true): string;
function agentId(args: JSONObject, required: boolean): string | undefined;
function agentId(args: JSONObject, required: boolean): string | undefined {
  const id = stringArg(args, "agent_id", required);
  if (id != null && !UUID.test(id)) throw new ToolError(`unknown agent: ${id.slice(0, 64)}`);
  return id;
}

/** SQL refusals the model can act on become tool errors; anything else stays a (masked) tool failure. */
async function sql<T>(run: () => Promise<T>, agent?: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    switch (code) {
      case "CHNTF": throw new ToolError(`unknown agent: ${agent ?? ""}`);
      case "AGDEP": throw new ToolError("this chat is itself an agent and cannot spawn agents (depth 1)");
      case "AGLIM": throw new ToolError("this chat already has the maximum of 32 agents");
      case "CHARC": throw new ToolError("the agent's chat is archived");
      case "CIINV": throw new ToolError(message ?? "invalid input");
      case "CHFNC": throw new ToolError("this run lost its lease; the call was not made");
      default: throw error;
    }
  }
}

function capText(value: string): string {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length <= RESULT_CAP_BYTES) return value;
  return `${bytes.subarray(0, RESULT_CAP_BYTES).toString("utf8").replace(/\uFFFD$/, "")}\n[truncated: ${bytes.length} bytes]`;
}

/** The parent's children (all, or the given ids), with each one's latest assistant text. */
async function readAgents(ctx: SubagentContext, ids: string[] | null): Promise<AgentState[]> {
  const { rows } = await ctx.pool.query<{ id: string; title: string | null; status: string; archived: boolean;
    last_error: JSONValue | null; answer: string | null }>(
    `select c.id, c.title, c.status::text as status, c.archived, c.last_error,
            (select string_agg(p ->> 'text', '' order by o) from jsonb_array_elements(m.content) with ordinality e(p, o)
             where p ->> 'type' = 'text') as answer
     from chat_public.chats c
     left join lateral (
       select m.content from chat_public.chat_messages m
       where m.chat_id = c.id and m.role = 'assistant' and m.kind = 'message' and not m.deleted
         and exists (select 1 from jsonb_array_elements(m.content) p where p ->> 'type' = 'text')
       order by m.id desc limit 1) m on true
     where c.parent_chat_id = $1 and ($2::uuid[] is null or c.id = any($2))
     order by c.created_at, c.id`, [ctx.chatId, ids]);
  return rows.map((r) => ({
    agent_id: r.id, title: r.title, status: r.archived ? "archived" : r.status,
    ...(r.answer != null && (r.status === "waiting" || r.status === "error") ? { result: capText(r.answer) } : {}),
    ...(r.status === "error" && r.last_error != null ? { error: r.last_error } : {}),
  }));
}

/** Settled: the child's turn is over (it waits for input, failed, or was archived). */
const settled = (agent: AgentState): boolean => agent.status === "waiting" || agent.status === "error" || agent.status === "archived";

/** Waits until every target settles, the bound passes or the call is aborted. It LISTENs before it reads, and a
 * notification that lands while it reads marks the state dirty, so no change between the read and the sleep is
 * lost. */
export async function waitForAgents(ctx: SubagentContext, ids: string[], timeoutMs: number, signal: AbortSignal): Promise<AgentState[]> {
  // An object, not a local: the listener callback writes it between the loop's reads.
  const changes = { dirty: false, wake: (): void => undefined };
  const onChange = (): void => {
    changes.dirty = true;
    changes.wake();
  };
  const unsubscribes: (() => Promise<void>)[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    for (const id of ids) unsubscribes.push(await ctx.subscribe(id, onChange));
    for (;;) {
      changes.dirty = false;
      const agents = await readAgents(ctx, ids);
      const remaining = deadline - Date.now();
      if (agents.every(settled) || remaining <= 0 || signal.aborted) return agents;
      if (changes.dirty) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(remaining, RECHECK_MS));
        signal.addEventListener("abort", done, { once: true });
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          changes.wake = () => undefined;
          resolve();
        }
        changes.wake = done;
      });
    }
  } finally {
    for (const unsubscribe of unsubscribes) await unsubscribe().catch(() => undefined);
  }
}

/** The spawn's idempotency key: the parent and its tool call (hashed when long; keys hold at most 200 characters). */
function spawnKey(chatId: string, toolCallId: string): string {
  const call = toolCallId.length <= 120 ? toolCallId : createHash("sha256").update(toolCallId).digest("hex");
  return `agent:${chatId}:${call}`;
}

const object = (properties: JSONObject, required: string[]): JSONObject =>
  ({ type: "object", properties, required, additionalProperties: false });
const AGENT_ID: JSONObject = { type: "string", description: "The agent id spawn_agent returned." };

/** The subagent tools of a root chat's run. Children are not offered them (depth 1). */
export function subagentTools(ctx: SubagentContext): ToolDefinition[] {
  // Children inherit plan mode, so spawning from a chat in plan mode stays read-only.
  const base = { kind: "internal" as const, planSafe: true };
  return [
    {
      ...base,
      name: "spawn_agent",
      description: "Start a subagent: a separate chat that works on `prompt` with this chat's workspace and tools, but " +
        "without this chat's history. Returns its agent_id at once; use wait_agent for its answer.",
      inputSchema: object({
        prompt: { type: "string", description: "Everything the agent needs to know: it sees nothing else." },
        title: { type: "string", maxLength: 200 },
      }, ["prompt"]),
      execute: async (args, tc) => {
        const prompt = stringArg(args, "prompt", true)!;
        const title = stringArg(args, "title", false) ?? null;
        const key = tc.toolCallId != null ? spawnKey(ctx.chatId, tc.toolCallId) : null;
        const { rows } = await sql(() => ctx.pool.query<{ id: string }>(
          "select chat_private.spawn_child_chat($1, $2, $3, $4, $5) as id", [ctx.chatId, ctx.runnerId, text(prompt), title, key]));
        return ok({ agent_id: rows[0]!.id, title: title ?? "agent", status: "running" });
      },
    },
    {
      ...base,
      name: "wait_agent",
      description: `Wait until a subagent (or, without agent_id, every subagent of this chat) finishes its turn, and return ` +
        `its latest answer. Waits at most timeout_s seconds (default ${WAIT_DEFAULT_S}, max ${WAIT_MAX_S}); an agent still ` +
        `running then reports status "running" and you may wait again.`,
      inputSchema: object({ agent_id: AGENT_ID, timeout_s: { type: "number", minimum: 1, maximum: WAIT_MAX_S } }, []),
      // The registry's timeout must not cut the wait short; the wait's own bound ends it first.
      timeoutMs: (WAIT_MAX_S + 10) * 1000,
      execute: async (args, tc) => {
        const id = agentId(args, false);
        const requested = args.timeout_s;
        if (requested != null && (typeof requested !== "number" || !Number.isFinite(requested) || requested <= 0)) {
          throw new ToolError("timeout_s must be a positive number of seconds");
        }
        const timeoutMs = Math.min(requested ?? WAIT_DEFAULT_S, WAIT_MAX_S) * 1000;
        const ids = id != null ? [id] : (await readAgents(ctx, null)).map((a) => a.agent_id);
        if (ids.length === 0) return ok({ agents: [], note: "this chat has no agents" });
        const agents = await waitForAgents(ctx, ids, timeoutMs, tc.signal);
        if (id == null) return ok({ agents: agents as unknown as JSONValue });
        const agent = agents[0];
        if (agent == null) throw new ToolError(`unknown agent: ${id}`);
        const still = settled(agent) ? {} : { note: `still running after ${timeoutMs / 1000} s; call wait_agent again` };
        return { result: { ...agent, ...still } as unknown as JSONValue, isError: agent.status === "error" };
      },
    },
    {
      ...base,
      name: "message_agent",
      description: "Send a follow-up message to a subagent. A busy agent queues it (interrupt: true stops its current " +
        "turn first). Use wait_agent for the answer.",
      inputSchema: object({ agent_id: AGENT_ID, message: { type: "string" }, interrupt: { type: "boolean" } },
        ["agent_id", "message"]),
      execute: async (args) => {
        const id = agentId(args, true);
        const message = stringArg(args, "message", true)!;
        if (args.interrupt != null && typeof args.interrupt !== "boolean") throw new ToolError("interrupt must be a boolean");
        const { rows } = await sql(() => ctx.pool.query<{ message_id: string | null; queued_message_id: string | null }>(
          "select (r).message_id, (r).queued_message_id from chat_private.agent_send($1, $2, $3, $4, $5) r",
          [ctx.chatId, ctx.runnerId, id, text(message), args.interrupt === true]), id);
        return ok({ agent_id: id, delivered: rows[0]?.queued_message_id != null ? "queued" : "started" });
      },
    },
    {
      ...base,
      name: "interrupt_agent",
      description: "Stop a subagent's current turn. Its answer so far stays readable with wait_agent.",
      inputSchema: object({ agent_id: AGENT_ID }, ["agent_id"]),
      execute: async (args) => {
        const id = agentId(args, true);
        const { rows } = await sql(() => ctx.pool.query<{ status: string }>(
          "select chat_private.agent_interrupt($1, $2, $3) as status", [ctx.chatId, ctx.runnerId, id]), id);
        return ok({ agent_id: id, status: rows[0]!.status });
      },
    },
    {
      ...base,
      name: "list_agents",
      description: "List this chat's subagents with their status and latest answer.",
      inputSchema: object({}, []),
      execute: async () => ok({ agents: (await readAgents(ctx, null)) as unknown as JSONValue }),
    },
  ];
}
