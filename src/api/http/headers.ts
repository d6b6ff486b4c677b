// The headers every response carries, set before the route writes its own. No response may be framed (clickjacking
// of the console's Stop, Delete and Promote buttons: `frame-ancestors 'none'` and, for older browsers,
// X-Frame-Options), sniffed into another type, or leak its URL as a referrer. What a response may load is decided
// by its kind: the console page loads only its own files (script, stylesheet, fetch and websocket to this origin);
// data (JSON, SSE, files) loads nothing; Ruru (development only) needs its inline scripts, so it gets no
// default-src but is never framed either.
import type { ServerResponse } from "node:http";

export type ResponseKind = "page" | "data" | "devtool";

const CONSOLE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'", "connect-src 'self'",
  "manifest-src 'self'", "base-uri 'none'", "form-action 'none'", "object-src 'none'", "frame-ancestors 'none'",
].join("; ");

const CSP: Readonly<Record<ResponseKind, string>> = {
  page: CONSOLE_CSP,
  data: "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  devtool: "frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
};

export function applySecurityHeaders(res: ServerResponse, options: { kind: ResponseKind }): void {
  res.setHeader("content-security-policy", CSP[options.kind]);
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "no-referrer");
  res.setHeader("cross-origin-opener-policy", "same-origin");
}
