// Whether a request was addressed to this machine by a loopback name. Development hands out a token for the
// `dev` user (the console's sign-in hint, Ruru's headers); a page on another site that rebinds its DNS name to
// 127.0.0.1 reaches the same socket, but its requests still name that site in Host (and in Origin when it sends
// one), so both must be loopback names for the token to be served.
import { isIPv4 } from "node:net";
import type { IncomingMessage } from "node:http";

function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "[::1]") return true;
  return isIPv4(name) && name.startsWith("127.");
}

function hostnameOf(authority: string, scheme: string): string | null {
  try {
    return new URL(`${scheme}${authority}`).hostname;
  } catch {
    return null;
  }
}

export function isLoopbackRequest(req: IncomingMessage): boolean {
  const host = req.headers.host;
  const hostname = host === undefined ? null : hostnameOf(host, "http://");
  if (hostname === null || !isLoopbackHostname(hostname)) return false;
  const origin = req.headers.origin;
  if (origin === undefined || origin === "null") return origin === undefined;
  const originHost = hostnameOf(origin, "");
  return originHost !== null && isLoopbackHostname(originHost);
}
