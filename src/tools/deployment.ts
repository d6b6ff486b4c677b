// Deployment configuration of the optional tools, read once by the worker from its environment. Everything is
// off unless a variable switches it on; limits are clamped so no setting can defeat the registry's output cap.
import type { ToolDeployment } from "./types.ts";

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
const MAX_EXEC_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_EXEC_OUTPUT_CAP_BYTES = 16 * 1024;
/** Two streams at this cap, JSON-escaped, still fit the registry's 64 KiB result cap in the usual case. */
const MAX_EXEC_OUTPUT_CAP_BYTES = 28 * 1024;

export const DEFAULT_TOOL_RESULT_CAP_BYTES = 64 * 1024;
/** A page of the transcript (CHATD_TRANSCRIPT_PAGE_BYTES, 1 MiB by default) still holds a step of a few results. */
const MAX_TOOL_RESULT_CAP_BYTES = 1024 * 1024;

export const READ_ONLY_DEPLOYMENT: ToolDeployment = {
  writeTools: false, execTools: false, execTimeoutMs: DEFAULT_EXEC_TIMEOUT_MS, execOutputCapBytes: DEFAULT_EXEC_OUTPUT_CAP_BYTES,
  resultCapBytes: DEFAULT_TOOL_RESULT_CAP_BYTES,
};

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name]?.trim().toLowerCase();
  if (value == null || value === "" || value === "0" || value === "false" || value === "no" || value === "off") return false;
  if (value === "1" || value === "true" || value === "yes" || value === "on") return true;
  throw new Error(`${name}: expected 1 or 0, got ${JSON.stringify(env[name])}`);
}

function bounded(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw == null || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name}: expected an integer from ${min} to ${max}`);
  return value;
}

/** CHATD_ENABLE_WRITE_TOOLS, CHATD_ENABLE_EXEC_TOOLS, CHATD_EXEC_TIMEOUT_MS, CHATD_EXEC_OUTPUT_CAP_BYTES,
 * CHATD_TOOL_RESULT_CAP_BYTES. A bad value
 * stops the worker at start-up rather than silently enabling or disabling a tool. */
export function toolDeploymentFromEnv(env: NodeJS.ProcessEnv = process.env): ToolDeployment {
  return {
    writeTools: flag(env, "CHATD_ENABLE_WRITE_TOOLS"),
    execTools: flag(env, "CHATD_ENABLE_EXEC_TOOLS"),
    execTimeoutMs: bounded(env, "CHATD_EXEC_TIMEOUT_MS", DEFAULT_EXEC_TIMEOUT_MS, 100, MAX_EXEC_TIMEOUT_MS),
    execOutputCapBytes: bounded(env, "CHATD_EXEC_OUTPUT_CAP_BYTES", DEFAULT_EXEC_OUTPUT_CAP_BYTES, 1024, MAX_EXEC_OUTPUT_CAP_BYTES),
    resultCapBytes: bounded(env, "CHATD_TOOL_RESULT_CAP_BYTES", DEFAULT_TOOL_RESULT_CAP_BYTES, 1024, MAX_TOOL_RESULT_CAP_BYTES),
  };
}
