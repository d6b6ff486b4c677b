// The structured turn the benchmarks run (bench/e2e.ts, bench/floor-alternate.ts): a user message with a schema
// whose scripted model calls one workspace tool and then finalizes validly, and the client statement creating it.
import type pg from "pg";
import type { ClientTurn } from "./sql-floor.ts";

const SCHEMA = { type: "object", properties: { files: { type: "integer" }, first: { type: "string" } }, required: ["files"], additionalProperties: false };
const SCRIPT = JSON.stringify({ script: [
  { tool_calls: [{ name: "list_files", args: { path: "." } }] },
  { tool_calls: [{ name: "coder_structured_output", args: { output: { files: 2, first: "a.txt" } } }] },
] });

/** The client's statement, after the role and user are set: what createStructuredChats sends and the SQL floor replays. */
export const CLIENT_TURN: ClientTurn = {
  createChat: "select chat_id from chat_public.create_chat(content => $1, response_format => $2, workspace => 'bench')",
  values: [JSON.stringify([{ type: "text", text: SCRIPT }]),
    JSON.stringify({ type: "json_schema", json_schema: { name: "listing", schema: SCHEMA } })],
};

/** Creates `count` structured chats from up to 4 connections at once, so the driver does not cap throughput. */
export async function createStructuredChats(pool: pg.Pool, user: string, count: number): Promise<void> {
  const lanes = Math.min(4, count);
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    const client = await pool.connect();
    try {
      for (let i = lane; i < count; i += lanes) {
        await client.query("begin");
        await client.query("select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', $1, true)", [user]);
        await client.query(CLIENT_TURN.createChat, CLIENT_TURN.values);
        await client.query("commit");
      }
    } finally {
      client.release();
    }
  }));
}

/** Until every structured request created so far has its receipt. Counted through the partial index of pending
 * requests, so the polling reads no table that grows with the run (it would show in the profile's scans). */
export async function waitForReceipts(pool: pg.Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ n: number }>("select count(*)::int as n from chat_public.structured_output_requests where status = 'pending'");
    if (rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
