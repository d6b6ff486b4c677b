// The `chatd` command in a child process, as a user runs it: its exit code and everything it printed.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../../src/db/database.ts";

/** With timeoutMs, a command still running then is killed (SIGKILL) and reported with code -1; `env` adds variables. */
export function runChatd(args: string[], databaseUrl: string, timeoutMs?: number, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, CHATD_LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? (timer ? -1 : 1), out });
    });
  });
}
