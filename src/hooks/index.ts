// Stop-hook HTTP client. A hook is an operator-configured webhook: chatd POSTs a JSON
// payload signed with HMAC-SHA256 and reads an optional answer {model_context?, user_message?}. Everything here is
// fail closed and sanitized: an error names the hook and what went wrong (status, timeout, size, JSON rule), never
// the secret, the request body or the response body, so nothing private reaches logs or the chat's last_error.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { parseJsonSafe, type JsonValue } from "../structured/index.ts";

export interface StopHook {
  id: string;
  name: string;
  url: string;
  timeoutMs: number;
  secret: string;
}

/** What a hook may answer. Blank strings count as absent. */
export interface HookAnswer {
  modelContext: string | null;
  userMessage: string | null;
}

export type HookCallResult = { ok: true; answer: HookAnswer } | { ok: false; error: string };

export const SIGNATURE_HEADER = "chatd-signature";
const DELIVERY_HEADER = "chatd-delivery";
/** Answers are small; a larger body is a failure, read no further than this. */
export const HOOK_RESPONSE_MAX_BYTES = 64 * 1024;
export const MODEL_CONTEXT_MAX_CHARS = 16 * 1024;
export const USER_MESSAGE_MAX_CHARS = 2000;

/**
 * The signature header value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The timestamp is signed
 * with the body so a receiver can refuse replays of an old delivery.
 */
export function signBody(secret: string, body: string, timestamp: number): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** The receiver's check (used by tests and shown in the README): constant-time, with a freshness window. */
export function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const fields = new Map(header.split(",").map((kv) => {
    const at = kv.indexOf("=");
    return [kv.slice(0, at).trim(), kv.slice(at + 1).trim()] as const;
  }));
  const t = Number(fields.get("t"));
  const given = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !/^[0-9a-f]{64}$/.test(given)) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest();
  return timingSafeEqual(expected, Buffer.from(given, "hex"));
}

/** Reads at most `max` bytes of the body; null when it is larger. */
async function readCapped(response: Response, max: number): Promise<Uint8Array | null> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (response.body == null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function optionalText(answer: Map<string, JsonValue>, field: string, max: number): string | null | { error: string } {
  const value = answer.get(field);
  if (value == null) return null;
  if (typeof value !== "string") return { error: `${field} must be a string` };
  if (value.length > max) return { error: `${field} is longer than ${max} characters` };
  return value.trim() === "" ? null : value;
}

/** Parses an answer through the JSON safety boundary. An empty body means "nothing to add". */
export function parseAnswer(bytes: Uint8Array): HookCallResult {
  if (Buffer.from(bytes).toString("utf8").trim() === "") return { ok: true, answer: { modelContext: null, userMessage: null } };
  const parsed = parseJsonSafe(bytes, { maxBytes: HOOK_RESPONSE_MAX_BYTES });
  if (!parsed.ok) return { ok: false, error: `the answer is not safe JSON (${parsed.error.rule})` };
  if (!(parsed.value instanceof Map)) return { ok: false, error: "the answer is not a JSON object" };
  const modelContext = optionalText(parsed.value, "model_context", MODEL_CONTEXT_MAX_CHARS);
  if (modelContext != null && typeof modelContext === "object") return { ok: false, error: modelContext.error };
  const userMessage = optionalText(parsed.value, "user_message", USER_MESSAGE_MAX_CHARS);
  if (userMessage != null && typeof userMessage === "object") return { ok: false, error: userMessage.error };
  return { ok: true, answer: { modelContext, userMessage } };
}

/**
 * POSTs `body` (exact JSON text) to the hook. `signal` aborts the call (an interrupt or a lost lease); the hook's
 * own timeout covers connecting, the status and reading the body.
 */
export async function callStopHook(hook: StopHook, body: string, signal: AbortSignal, now: () => number = Date.now): Promise<HookCallResult> {
  const timeout = AbortSignal.timeout(hook.timeoutMs);
  const timestamp = Math.floor(now() / 1000);
  try {
    const response = await fetch(hook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [SIGNATURE_HEADER]: signBody(hook.secret, body, timestamp),
        [DELIVERY_HEADER]: randomUUID(),
        "user-agent": "chatd-stop-hook/1",
      },
      body,
      redirect: "error",
      signal: AbortSignal.any([signal, timeout]),
    });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, error: `stop hook ${hook.name} answered HTTP ${response.status}` };
    }
    const bytes = await readCapped(response, HOOK_RESPONSE_MAX_BYTES);
    if (bytes == null) return { ok: false, error: `stop hook ${hook.name} answered more than ${HOOK_RESPONSE_MAX_BYTES} bytes` };
    const parsed = parseAnswer(bytes);
    return parsed.ok ? parsed : { ok: false, error: `stop hook ${hook.name}: ${parsed.error}` };
  } catch (error) {
    if (timeout.aborted && !signal.aborted) return { ok: false, error: `stop hook ${hook.name} timed out after ${hook.timeoutMs} ms` };
    if (signal.aborted) return { ok: false, error: `stop hook ${hook.name} call was aborted` };
    // Network errors: the code only (ECONNREFUSED, ...); messages may echo the URL's credentials or query.
    const cause = (error as { cause?: { code?: unknown } }).cause;
    const code = typeof cause?.code === "string" ? cause.code : "network error";
    return { ok: false, error: `stop hook ${hook.name} could not be reached (${code})` };
  }
}
