// A `chatd start` (or `npm start`) in a child process with JSON logs on stderr, for the process-tree and README
// tests: every log line is parsed as it arrives, and `waitFor` resolves on the first line that matches (an event,
// never a sleep), or rejects when the output ends first.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { processAlive } from "../../src/process-alive.ts";

export interface LogLine {
  level?: number;
  msg?: string;
  pid?: number;
  raw: string;
  [key: string]: unknown;
}

export interface ChatdProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  lines: LogLine[];
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor(what: string, match: (line: LogLine) => boolean): Promise<LogLine>;
}

/** An environment for a chatd of its own: embedded PostgreSQL in `dataDir`, any free ports, JSON logs. */
export function isolatedEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHATD_DATA_DIR: dataDir,
    CHATD_WORKSPACES_ROOT: join(dataDir, "workspaces"),
    CHATD_LOG_FORMAT: "json",
    PORT: "0",
    CHATD_METRICS_PORT: "0",
    ...extra,
  };
  delete env.DATABASE_URL;
  return env;
}

export function launch(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): ChatdProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: LogLine[] = [];
  const waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (raw) => {
    let line: LogLine = { raw };
    try {
      line = { ...(JSON.parse(raw) as object), raw };
    } catch {
      // not a log line (npm's own output, a stack trace): kept raw
    }
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })));
  // Children that inherited stderr (the worker) may write after the process itself exited: the end of the output
  // is when the last writer closed it.
  const ended = new Promise<void>((resolve) => child.stderr.once("close", () => resolve()));
  const waitFor = (what: string, match: (line: LogLine) => boolean) => {
    const seen = lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve, reject) => {
      waiters.push({ match, resolve });
      void ended.then(() => reject(new Error(`${command}'s output ended before ${what}; stderr:\n${lines.map((l) => l.raw).join("\n")}`)));
    });
  };
  return { child, lines, stdout: () => out, exited, waitFor };
}

/** Running, not a zombie (an orphan's zombie lingers until whoever adopted it reaps it). */
export const alive = processAlive;
