// One delivery attempt: POST the exact body with the signed headers, at most `timeoutMs` from connect to the end of
// the answer (a slow receiver cannot hold a worker), the answer's body read up to a small cap and dropped.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockedTarget, guardedLookup, literalHostBlocked } from "./target.ts";
import type { SignedHeaders } from "./signing.ts";

export const SEND_TIMEOUT_MS = 15_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export interface Attempt {
  statusCode: number | null;
  /** Seconds the receiver asked to wait (Retry-After), when it did. */
  retryAfterSeconds: number | null;
  /** Why no answer came (sanitized: no body, no secret). */
  error: string | null;
}

export interface SendOptions {
  /** Refuse private and special-purpose targets (production). */
  guard: boolean;
  timeoutMs?: number;
  userAgent: string;
}

export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

export function sendWebhook(url: string, body: string, headers: SignedHeaders, options: SendOptions): Promise<Attempt> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ statusCode: null, retryAfterSeconds: null, error: "the endpoint URL is not valid" });
  }
  if (options.guard && (target.protocol !== "https:" || literalHostBlocked(target))) {
    return Promise.resolve({ statusCode: null, retryAfterSeconds: null,
      error: target.protocol !== "https:" ? "production sends to https URLs only" : "the target address is private or special-purpose" });
  }
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(attempt);
    };
    const req = request(target, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": options.userAgent, ...headers,
        "content-length": Buffer.byteLength(body) },
      ...(options.guard ? { lookup: guardedLookup } : {}),
    }, (res: IncomingMessage) => {
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const done = () => finish({ statusCode: res.statusCode ?? null,
        retryAfterSeconds: retryAfterSeconds(res.headers["retry-after"]), error: null });
      res.on("end", done);
      res.on("close", done);
      res.on("error", done);
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ statusCode: null, retryAfterSeconds: null, error: `no answer within ${options.timeoutMs ?? SEND_TIMEOUT_MS} ms` });
    }, options.timeoutMs ?? SEND_TIMEOUT_MS);
    req.on("error", (error: Error) => finish({ statusCode: null, retryAfterSeconds: null,
      error: error instanceof BlockedTarget ? error.message : `connection failed (${(error as NodeJS.ErrnoException).code ?? "error"})` }));
    req.end(body);
  });
}
