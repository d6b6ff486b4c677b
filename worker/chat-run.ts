// `chat_run`: takes the runner lease and drives the turn. The model tool loop arrives with the agent runtime;
// until then a runnable chat is ended honestly instead of being left running: an interruption is finished, and
// a turn fails with `runtime_unavailable` (a structured request gets its generation_failed receipt).
import type { Task } from "graphile-worker";
import type pg from "pg";
import type { Logger } from "../src/log.ts";

const NOT_RUNNABLE = new Set(["CHTRN", "CHARC", "CHNTF", "CHLSD"]);

interface Fence {
  runner_id: string;
  history_version: string;
  generation_attempt: string;
}

export function makeChatRunTask(deps: { pool: pg.Pool; workerId: string; log: Logger }): Task {
  return async (payload) => {
    const chatId = (payload as { chat_id?: unknown }).chat_id;
    if (typeof chatId !== "string") return;
    let fence: Fence;
    try {
      const { rows } = await deps.pool.query<Fence>("select * from chat_private.acquire_lease($1, $2)", [chatId, deps.workerId]);
      fence = rows[0]!;
    } catch (error) {
      if (NOT_RUNNABLE.has((error as { code?: string }).code ?? "")) return;
      throw error;
    }
    const log = deps.log.child({ chat_id: chatId, runner_id: fence.runner_id });
    const args = [chatId, fence.runner_id, fence.history_version, fence.generation_attempt];
    const { rows } = await deps.pool.query<{ status: string }>("select status from chat_public.chats where id = $1", [chatId]);
    if (rows[0]?.status === "interrupting") {
      await deps.pool.query("select chat_private.finish_interruption($1, $2, $3, $4)", args);
      log.info("interruption finished");
      return;
    }
    await deps.pool.query("select chat_private.finish_error($1, $2, $3, $4, $5, $6)",
      [...args, "runtime_unavailable", "this chatd build has no agent runtime yet"]);
    log.warn("turn ended: no agent runtime in this build");
  };
}
