// The worker's side of the SQL state machine: each method is one fenced transition (one round trip, one
// transaction). The fence moves forward with every commit that returns a new one; a lost fence raises CHFNC,
// which the loop treats as "stop without writing".
import type pg from "pg";
import { partsChannel } from "../../src/channels.ts";
import { screenJson, screenText } from "./poison.ts";
import type { Fence, FenceRow, StoredMessage } from "./types.ts";

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Publishes part deltas on a chat's parts channel (src/channels.ts), in sequence order (deltas.ts). */
export const PUBLISH_DELTAS = "select pg_notify($1, p) from unnest($2::text[]) with ordinality u(p, n) order by n";

/** The worker's frequent statements are named, so each pooled connection parses and plans them once. */
const COMMIT_STEP = "select * from chat_private.commit_step($1, $2, $3, $4, $5, $6, $7)";

export class Transitions {
  readonly pool: pg.Pool;
  fence: Fence;
  /** History rows held back to ride with the next commit (results.ts defers the results of read-only workspace calls,
   * which are safe to run again if this runner dies before that commit). Every history write includes them first;
   * any other transition commits them on their own beforehand, so no transition ever skips over them. */
  private deferred: StoredMessage[] = [];
  /** Part deltas of the step being committed that were not published while it streamed (deltas.ts): they ride with
   * the step's commit, published in its transaction before its notification. */
  private deltas: string[] = [];

  constructor(pool: pg.Pool, fence: Fence) {
    this.pool = pool;
    this.fence = fence;
  }

  private args(): unknown[] {
    const f = this.fence;
    return [f.chatId, f.runnerId, f.historyVersion, f.generationAttempt];
  }

  private advance(row: FenceRow | undefined): void {
    if (row == null || row.runner_id == null) return;
    this.fence = { ...this.fence, historyVersion: row.history_version, generationAttempt: row.generation_attempt };
  }

  /** Holds rows back until the next commit (see `deferred`). */
  defer(messages: StoredMessage[]): void {
    this.deferred.push(...messages);
  }

  /** Hands the step's unpublished part deltas (payloads in sequence order) to the next commit. */
  carryDeltas(payloads: string[]): void {
    this.deltas.push(...payloads);
  }

  /** The carried deltas for a commit statement, which publishes them (null: none). */
  private takeDeltas(): string[] | null {
    if (this.deltas.length === 0) return null;
    const deltas = this.deltas;
    this.deltas = [];
    return deltas;
  }

  /** How many rows the next commit puts before the caller's own (a candidate's message index counts them). */
  get deferredCount(): number {
    return this.deferred.length;
  }

  /** The caller's JSON array text with the deferred rows in front, screened (poison.ts). */
  private withDeferred(messagesJson: string): string {
    if (this.deferred.length === 0) return screenJson(messagesJson).text;
    const deferred = JSON.stringify(this.deferred).slice(0, -1);
    return screenJson(messagesJson === "[]" ? `${deferred}]` : `${deferred},${messagesJson.slice(1)}`).text;
  }

  /** Forgets the deferred rows and carried deltas (a commit of them failed for good: turn-end.ts). */
  discardPending(): void {
    this.deferred = [];
    this.deltas = [];
  }

  /** Commits the deferred rows (and publishes carried deltas) on their own, before a transition that writes no
   * history rows of its caller. */
  async flush(): Promise<void> {
    if (this.deferred.length > 0) await this.commitStep([]);
    else await this.publishDeltas();
  }

  /** Publishes carried deltas in a statement of their own (a transition that does not take them). */
  private async publishDeltas(): Promise<void> {
    const deltas = this.takeDeltas();
    if (deltas == null) return;
    await this.pool.query({ name: "chatd_part_deltas", text: PUBLISH_DELTAS, values: [partsChannel(this.fence.chatId), deltas] });
  }

  async commitStep(messages: StoredMessage[], progress: object = {}): Promise<void> {
    await this.commitStepJson(JSON.stringify(messages), JSON.stringify(progress));
  }

  /** commit_step with JSON text built by the caller, for values whose exact number text must survive. */
  async commitStepJson(messagesJson: string, progressJson: string): Promise<void> {
    const { rows } = await this.pool.query<FenceRow>({ name: "chatd_commit_step", text: COMMIT_STEP,
      values: [...this.args(), this.withDeferred(messagesJson), progressJson, this.takeDeltas()] });
    this.deferred = [];
    this.advance(rows[0]);
  }

  /** commit_step then finish_turn in one transaction (sql/120). Null: a stop hook is enabled, so only the step was
   * committed (the fence moved on) and the caller finishes the turn. Else the chat's new status, as finishTurn. */
  async commitStepAndFinishTurn(messagesJson: string, progressJson: string, outcome: object | null): Promise<string | null> {
    const { rows } = await this.pool.query<FenceRow & { status: string | null }>({ name: "chatd_commit_step_and_finish_turn",
      text: "select * from chat_private.commit_step_and_finish_turn($1, $2, $3, $4, $5, $6, $7, $8)",
      values: [...this.args(), this.withDeferred(messagesJson), progressJson, outcome == null ? null : JSON.stringify(outcome),
        this.takeDeltas()] });
    this.deferred = [];
    const row = rows[0];
    if (row?.status != null) return row.status;
    this.advance(row);
    return null;
  }

  /** compact_history: summary, marker and carried-over input in one fenced transaction; the fence moves on. */
  async compactHistory(summary: string, upToMessageId: string, marker: string, usage: object): Promise<void> {
    await this.flush();
    const { rows } = await this.pool.query<FenceRow>("select * from chat_private.compact_history($1, $2, $3, $4, $5, $6, $7, $8)",
      [...this.args(), screenText(summary).text, upToMessageId, marker, JSON.stringify(usage)]);
    this.advance(rows[0]);
  }

  async enterRequiresAction(calls: { tool_call_id: string; tool_name: string; args: unknown }[]): Promise<void> {
    await this.flush();
    await this.pool.query("select chat_private.enter_requires_action($1, $2, $3, $4, $5)",
      [...this.args(), screenJson(JSON.stringify(calls)).text]);
  }

  /** Returns the chat's new status: `running` when the queue head was promoted into a new turn. */
  async finishTurn(outcome: object | null): Promise<string> {
    await this.flush();
    const { rows } = await this.pool.query<{ status: string }>({ name: "chatd_finish_turn",
      text: "select chat_private.finish_turn($1, $2, $3, $4, $5) as status",
      values: [...this.args(), outcome == null ? null : JSON.stringify(outcome)] });
    return rows[0]!.status;
  }

  async finishError(kind: string, message: string): Promise<void> {
    await this.flush();
    await this.pool.query("select chat_private.finish_error($1, $2, $3, $4, $5, $6)", [...this.args(), kind, message]);
  }

  async finishInterruption(partial: StoredMessage[]): Promise<string> {
    await this.publishDeltas();
    const { rows } = await this.pool.query<{ status: string }>(
      "select chat_private.finish_interruption($1, $2, $3, $4, $5) as status", [...this.args(), this.withDeferred(JSON.stringify(partial))]);
    this.deferred = [];
    return rows[0]!.status;
  }

  async recordRetryState(state: object | null): Promise<void> {
    await this.flush();
    const { rows } = await this.pool.query<FenceRow>("select * from chat_private.record_retry_state($1, $2, $3, $4, $5)",
      [...this.args(), state == null ? null : JSON.stringify(state)]);
    this.advance(rows[0]);
  }

  async release(): Promise<void> {
    await this.pool.query("select chat_private.release_lease($1, $2)", [this.fence.chatId, this.fence.runnerId]);
  }
}
