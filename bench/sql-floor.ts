// The SQL floor of a structured turn: the statements one turn sends, replayed by pgbench with no worker and no
// Node.js in the loop. The client's create_chat is the bench's own; the worker's lease, step and final commit are
// the ones this run's worker sent (bench/worker-process.ts captures the first call of each named statement), with
// the chat id and fence taken from the statement before, as the worker does. Graphile Worker's fetch and completion
// are stood in for by one delete of the job, which costs less, so the rate is an upper bound for any worker over
// this SQL: what PostgreSQL alone allows on this machine.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CapturedStatement {
  text: string;
  values: unknown[];
}

/** The client's create_chat statement (after the role and user are set) and its parameter values; it returns chat_id. */
export interface ClientTurn {
  createChat: string;
  values: string[];
}

export type FloorResult = { turnsPerSecond: number; turns: number } | { skipped: string };

export interface FloorOptions {
  clients: number;
  seconds: number;
}

/** The worker's statements of one turn in order. Each returns (runner_id, history_version, generation_attempt, ...),
 * read back with \gset; the fenced ones take the fence as $1..$4 (worker/loop/transitions.ts `args`). */
const WORKER_STATEMENTS: { name: string; fenced: boolean }[] = [
  { name: "chatd_acquire_lease", fenced: false },
  { name: "chatd_commit_step", fenced: true },
  { name: "chatd_commit_step_and_finish_turn", fenced: true },
];
const FENCE_VARIABLES = ["chat_id", "runner_id", "history_version", "generation_attempt"];

/** A value as node-pg sends it, as text for `pgbench -D` (null has no -D form: the caller writes `null`). */
function asText(value: unknown): string {
  if (Array.isArray(value)) {
    return `{${value.map((item) => `"${String(item).replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`).join(",")}}`;
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Replaces $n (highest first, so $1 does not eat $10) by what `name(n)` gives. */
function bindParameters(text: string, count: number, name: (n: number) => string): string {
  let out = text;
  for (let n = count; n >= 1; n--) out = out.replaceAll(`$${n}`, name(n));
  return out;
}

export function floorScript(client: ClientTurn, statements: Record<string, CapturedStatement>):
  { script: string; variables: Record<string, string> } | { skipped: string } {
  const variables: Record<string, string> = {};
  const lines = ["begin;", "select set_config('role', 'chat_user', true), set_config('jwt.claims.sub', :user_id, true);"];
  client.values.forEach((value, i) => { variables[`client_${i + 1}`] = value; });
  lines.push(`${bindParameters(client.createChat, client.values.length, (n) => `:client_${n}`)} \\gset`, "commit;");
  for (const { name, fenced } of WORKER_STATEMENTS) {
    const captured = statements[name];
    if (captured == null) return { skipped: `the worker sent no ${name} statement` };
    const bound = bindParameters(captured.text, captured.values.length, (n) => {
      if (n === 1) return ":chat_id";
      if (fenced && n <= FENCE_VARIABLES.length) return `:${FENCE_VARIABLES[n - 1]!}`;
      const value = captured.values[n - 1];
      if (value == null) return "null";
      variables[`${name}_${n}`] = asText(value);
      return `:${name}_${n}`;
    });
    lines.push(`${bound} \\gset`);
  }
  lines.push("delete from graphile_worker._private_jobs where key = 'chat:' || :chat_id;");
  return { script: `${lines.join("\n")}\n`, variables };
}

/** Runs the floor script as `userId`; skipped when pgbench is not on PATH. */
export function sqlFloor(url: string, userId: string, client: ClientTurn, statements: Record<string, CapturedStatement>,
  options: FloorOptions): FloorResult {
  const built = floorScript(client, statements);
  if ("skipped" in built) return built;
  const dir = mkdtempSync(join(tmpdir(), "chatd-floor-"));
  try {
    const file = join(dir, "turn.sql");
    writeFileSync(file, built.script);
    const defines = Object.entries({ ...built.variables, user_id: userId }).flatMap(([k, v]) => ["-D", `${k}=${v}`]);
    const run = spawnSync("pgbench", ["-n", "-M", "prepared", "-c", String(options.clients), "-j", "2",
      "-T", String(options.seconds), ...defines, "-f", file, url], { encoding: "utf8" });
    if (run.error != null) return { skipped: `pgbench could not run (${run.error.message}); it comes with PostgreSQL's client tools` };
    const tps = /tps = ([0-9.]+)/.exec(run.stdout);
    const processed = /number of transactions actually processed: ([0-9]+)/.exec(run.stdout);
    const failed = /number of failed transactions: ([0-9]+)/.exec(run.stdout);
    if (run.status !== 0 || tps == null || processed == null || (failed != null && failed[1] !== "0")) {
      const error = `${run.stderr}`.split("\n").find((line) => /error/i.test(line)) ?? `exit ${String(run.status)}`;
      return { skipped: `pgbench failed: ${error.slice(0, 300)}` };
    }
    return { turnsPerSecond: Number(tps[1]), turns: Number(processed[1]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
