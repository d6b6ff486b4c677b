// `run_command` (only where the deployment enables it, never in plan mode). A model produces shell
// command lines, so the line runs under `/bin/sh -c`; what bounds it is everything around the shell:
// - cwd is the chat's workspace and the environment is a fixed minimal one, so nothing of the worker's
//   environment (database URL, provider keys, hook secrets) reaches the command;
// - the command leads its own process group, and a timeout, an interrupt or the end of the command kills that
//   whole group, so background children cannot outlive the call or keep its pipes open;
// - stdout and stderr are each kept up to a byte cap; the rest is counted and dropped.
// This is confinement of what the worker hands over, not a sandbox: the command runs with the worker's user
// and can reach whatever that user can. Enable it only where that is acceptable (README "## Tools").
import { spawn } from "node:child_process";
import type { JSONObject } from "../providers/index.ts";
import { ToolError, type ToolContext, type ToolDefinition, type ToolDeployment, type ToolOutput } from "./types.ts";

const COMMAND_MAX_CHARS = 16 * 1024;
/** The registry's own timeout must not fire before the command's: it would drop the partial output. */
const KILL_GRACE_MS = 5_000;
const MINIMAL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private readonly cap: number;
  private kept = 0;
  total = 0;
  constructor(cap: number) {
    this.cap = cap;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.cap - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  text(): string {
    // A cut may split a UTF-8 sequence; drop the replacement character it decodes to.
    const text = Buffer.concat(this.chunks).toString("utf8");
    return this.total > this.kept ? text.replace(/\uFFFD$/, "") : text;
  }
}

function killGroup(pid: number | undefined): void {
  if (pid == null) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** The environment a command sees: nothing inherited from the worker. */
export function commandEnvironment(workspaceRoot: string): Record<string, string> {
  return { PATH: MINIMAL_PATH, HOME: workspaceRoot, PWD: workspaceRoot, LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TERM: "dumb" };
}

interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  stdout: CappedBuffer;
  stderr: CappedBuffer;
}

function runShell(command: string, ctx: ToolContext, deployment: ToolDeployment): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: ctx.workspaceRoot, env: commandEnvironment(ctx.workspaceRoot), stdio: ["ignore", "pipe", "pipe"], detached: true,
    });
    const stdout = new CappedBuffer(deployment.execOutputCapBytes);
    const stderr = new CappedBuffer(deployment.execOutputCapBytes);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    let cancelled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, deployment.execTimeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      killGroup(child.pid);
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    let exit: { code: number | null; signal: string | null } | undefined;
    const done = (): void => {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    };
    child.on("error", (error) => {
      done();
      reject(error);
    });
    // The shell exiting does not close the pipes while a background child holds them: end the group first.
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      killGroup(child.pid);
    });
    child.on("close", () => {
      done();
      resolve({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut, cancelled, stdout, stderr });
    });
    if (ctx.signal.aborted) onAbort();
  });
}

function streamResult(result: JSONObject, name: string, buffer: CappedBuffer): void {
  result[name] = buffer.text();
  if (buffer.total > Buffer.byteLength(result[name] as string, "utf8")) {
    result[`${name}_truncated`] = `kept ${Buffer.byteLength(result[name] as string, "utf8")} of ${buffer.total} bytes`;
  }
}

async function runCommand(args: JSONObject, ctx: ToolContext, deployment: ToolDeployment): Promise<ToolOutput> {
  const command = args.command;
  if (typeof command !== "string" || command.trim() === "") throw new ToolError("command must be a non-empty string");
  if (command.length > COMMAND_MAX_CHARS) throw new ToolError(`command has more than ${COMMAND_MAX_CHARS} characters`);
  if (command.includes("\0")) throw new ToolError("command must not contain NUL characters");
  const outcome = await runShell(command, ctx, deployment);
  if (outcome.cancelled && !outcome.timedOut) throw new ToolError("the tool was cancelled");
  const result: JSONObject = { exit_code: outcome.exitCode };
  if (outcome.signal != null && !outcome.timedOut) result.signal = outcome.signal;
  if (outcome.timedOut) result.timed_out = `the command was killed after ${deployment.execTimeoutMs} ms`;
  streamResult(result, "stdout", outcome.stdout);
  streamResult(result, "stderr", outcome.stderr);
  return { result, isError: outcome.timedOut || outcome.exitCode !== 0 };
}

/** `run_command` bound to the deployment's limits. */
export function execTools(deployment: ToolDeployment): ToolDefinition[] {
  return [{
    name: "run_command",
    kind: "workspace",
    description: `Run a shell command line (/bin/sh -c) in the workspace folder. Minimal environment, no stdin; ` +
      `killed after ${Math.round(deployment.execTimeoutMs / 1000)} s; stdout and stderr are each cut at ` +
      `${deployment.execOutputCapBytes} bytes.`,
    inputSchema: {
      type: "object",
      properties: { command: { type: "string", description: "The command line, run from the workspace folder." } },
      required: ["command"],
      additionalProperties: false,
    },
    timeoutMs: deployment.execTimeoutMs + KILL_GRACE_MS,
    execute: (args, ctx) => runCommand(args, ctx, deployment),
  }];
}
