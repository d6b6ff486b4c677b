// Structured JSON logs (pino). Never log secrets, provider bodies or schema values.
import { pino } from "pino";

// Logs go to stderr, so that what a command prints on stdout (a token, a batch id, results) stays clean for pipes.
export const logger = pino({ name: "chatd", level: process.env.CHATD_LOG_LEVEL ?? "info" }, pino.destination(2));
export type Logger = typeof logger;
