// Scheduled at the requires-action deadline: cancels the client tool calls the chat still waits on.
import type { Task } from "graphile-worker";
import type pg from "pg";
import type { Logger } from "../src/log.ts";

const NOTHING_TO_DO = new Set(["CHTRN", "CHARC", "CHNTF"]);

export function makeDeadlineTask(deps: { pool: pg.Pool; log: Logger }): Task {
  return async (payload) => {
    const chatId = (payload as { chat_id?: unknown }).chat_id;
    if (typeof chatId !== "string") return;
    try {
      const { rows } = await deps.pool.query<{ canceled: boolean }>(
        "select chat_private.cancel_requires_action($1) as canceled", [chatId]);
      if (rows[0]?.canceled) deps.log.info({ chat_id: chatId }, "client tool calls cancelled at the deadline");
    } catch (error) {
      // The chat left requires_action before the deadline (results arrived, an edit, an interrupt).
      if (NOTHING_TO_DO.has((error as { code?: string }).code ?? "")) return;
      throw error;
    }
  };
}
