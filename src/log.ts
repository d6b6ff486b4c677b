// Structured JSON logs (pino). Never log secrets, provider bodies or schema values.
import { pino } from "pino";

export const logger = pino({ name: "chatd", level: process.env.CHATD_LOG_LEVEL ?? "info" });
export type Logger = typeof logger;
