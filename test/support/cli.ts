// The `chatd` command in a child process, as a user runs it: its exit code and everything it printed.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../../src/db/database.ts";

export function runChatd(args: string[], databaseUrl: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(projectRoot, "src", "cli", "main.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, CHATD_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}
