// Logs (pino) on stderr, so that what a command prints on stdout (a token, a batch id, results) stays clean for
// pipes: readable lines (pino-pretty) when stderr is a terminal, JSON lines otherwise, and always with
// CHATD_LOG_FORMAT=json. Never log secrets, provider bodies or schema values.
import { pino } from "pino";
import pretty from "pino-pretty";

export type LogFormat = "json" | "pretty";

/** CHATD_LOG_FORMAT (`json` or `pretty`) when set, else pretty exactly when stderr is a terminal. */
export function logFormat(setting: string | undefined, stderrIsTerminal: boolean): LogFormat {
  if (setting === undefined || setting === "") return stderrIsTerminal ? "pretty" : "json";
  if (setting === "json" || setting === "pretty") return setting;
  throw new Error(`CHATD_LOG_FORMAT must be json or pretty, not ${JSON.stringify(setting)}`);
}

export const format: LogFormat = logFormat(process.env.CHATD_LOG_FORMAT, process.stderr.isTTY === true);

// Both destinations write synchronously: a process that exits right after a line (a failed start) keeps it.
const destination = format === "pretty"
  ? pretty({ destination: 2, sync: true, singleLine: true, ignore: "pid,hostname,name", translateTime: "SYS:HH:MM:ss" })
  : pino.destination({ fd: 2, sync: true });

export const logger = pino({ name: "chatd", level: process.env.CHATD_LOG_LEVEL ?? "info" }, destination);
export type Logger = typeof logger;
