// Real worker processes for the fault suite (test/support/worker-process.ts) on a private cluster, with their log
// lines (pino JSON on stdout) read as they come, so a test can wait for a line (a barrier) and see how each exited.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface FaultWorker {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  /** The exit code (128 + signal number for a signal), once it exited. */
  readonly exited: Promise<number>;
  alive(): boolean;
  /** Resolves with the first line (seen or to come) whose message matches; rejects when the process exits first. */
  waitForLine(message: RegExp, timeoutMs?: number): Promise<LogLine>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
  /** Its stderr and last log lines, for an assertion's message. */
  describe(): string;
}

const SIGNALS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };

export function spawnFaultWorker(url: string, workspacesRoot: string, env: Record<string, string> = {}): FaultWorker {
  const child = spawn(process.execPath, [join(import.meta.dirname, "..", "..", "support", "worker-process.ts")], {
    env: { ...process.env, DATABASE_URL: url, CHATD_WORKSPACES_ROOT: workspacesRoot, CHATD_FAULTS: "", CHATD_TEST_LOG: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  const waiters = new Set<(line: LogLine) => void>();
  let stderr = "";
  let exitCode: number | undefined;
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout! }).on("line", (text) => {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    lines.push(line);
    for (const waiter of waiters) waiter(line);
  });
  const exited = new Promise<number>((resolve) => child.on("exit", (code, signal) => {
    exitCode = code ?? (signal != null ? 128 + (SIGNALS[signal] ?? 0) : -1);
    resolve(exitCode);
  }));
  const describe = () => `stderr: ${stderr.slice(-2000)}\nlast lines: ${lines.slice(-8).map((l) => l.msg).join(" | ")}`;
  return {
    child, lines, exited,
    alive: () => exitCode == null,
    describe,
    waitForLine(message, timeoutMs = 60_000) {
      const seen = lines.find((line) => message.test(line.msg));
      if (seen != null) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`no log line ${message} within ${timeoutMs} ms; ${describe()}`)), timeoutMs);
        const waiter = (line: LogLine) => {
          if (message.test(line.msg)) done(line);
        };
        const done = (result: LogLine | Error) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          if (result instanceof Error) reject(result);
          else resolve(result);
        };
        waiters.add(waiter);
        void exited.then((code) => done(new Error(`the worker exited (${code}) before logging ${message}; ${describe()}`)));
      });
    },
    async stop() {
      if (exitCode == null) child.kill("SIGTERM");
      return exited;
    },
  };
}
