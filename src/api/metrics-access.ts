// /metrics on the API port: open in development; in production only with `Authorization: Bearer
// <CHATD_METRICS_TOKEN>` (its counts are system-wide), and off when no token is configured (the worker serves the
// same registry on its own metrics port, CHATD_METRICS_PORT, which an operator keeps off the public network).
import { timingSafeEqual } from "node:crypto";

export type MetricsAccess = "ok" | "unauthorized" | "disabled";

export function metricsAllowed(development: boolean, authorization: string | undefined): MetricsAccess {
  if (development) return "ok";
  const token = process.env.CHATD_METRICS_TOKEN;
  if (!token) return "disabled";
  const given = Buffer.from(/^Bearer\s+(\S+)$/i.exec(authorization?.trim() ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected) ? "ok" : "unauthorized";
}
