// How a chatd process ends on SIGINT (Ctrl-C), SIGTERM (systemd, Docker, `timeout`, npm passing it on) or SIGHUP
// (a closed terminal). chatd owns these signals: the embedded PostgreSQL and `chatd start`'s worker run in sessions
// of their own, so a terminal's Ctrl-C reaches this process alone, which stops the parts in order, the database last.
import { logger } from "../log.ts";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type Signal = (typeof SIGNALS)[number];
const EXIT_CODE: Record<Signal, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** The longest an ordered shutdown may take (the API's request grace is 10 s, the worker child's stop 20 s). */
export const SHUTDOWN_DEADLINE_MS = 30_000;

let onSignal: (signal: Signal) => void = (signal) => process.exit(EXIT_CODE[signal]);
let installed = false;
let deferInterrupts = false;

function install(handler: (signal: Signal) => void): void {
  onSignal = handler;
  if (installed) return;
  installed = true;
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (signal === "SIGINT" && deferInterrupts) return;
      onSignal(signal);
    });
  }
}

/** Until something better is registered, a signal stops what the command started (its database) and exits 128+n. */
export function exitOnSignal(stop: () => Promise<void>): void {
  let stopping: Promise<void> | undefined;
  install((signal) => {
    stopping ??= stop().finally(() => process.exit(EXIT_CODE[signal]));
  });
}

/**
 * Long-running commands: the first signal (or a call of the returned function) runs `stops` in reverse order, then
 * exits 0; a failed part or the deadline exits 1. Later signals are ignored: in a terminal, Ctrl-C reaches npm and
 * chatd at once and npm passes its copy on, so one keypress arrives twice. `quiet`: a child whose parent has said
 * so already.
 */
export function runUntilStopped(stops: (() => Promise<void>)[], options: { quiet?: boolean } = {}): (reason: string) => void {
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger[options.quiet === true ? "debug" : "info"]({ reason }, "shutting down");
    setTimeout(() => {
      logger.error({ deadline_ms: SHUTDOWN_DEADLINE_MS }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void (async () => {
      let code = 0;
      for (const part of [...stops].reverse()) {
        try {
          await part();
        } catch (error) {
          code = 1;
          logger.error({ err: error }, "error during shutdown");
        }
      }
      process.exit(code);
    })();
  };
  install((signal) => stop(signal));
  return stop;
}

/** While `run` runs, Ctrl-C belongs to the interactive child it drives (psql cancels its query with it). */
export async function withInterruptsDeferred<T>(run: () => Promise<T>): Promise<T> {
  deferInterrupts = true;
  const keepAlive = () => undefined; // without a SIGINT listener, Node's default would end this process
  process.on("SIGINT", keepAlive);
  try {
    return await run();
  } finally {
    process.off("SIGINT", keepAlive);
    deferInterrupts = false;
  }
}
