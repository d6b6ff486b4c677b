// The web console's files (console/dist, built by `npm install` at the repository root) at `/`: the page at `/`
// and its assets under `/console/`. Nothing is fetched from elsewhere, so the console works offline.
// `/console/config.json` tells the sign-in form the development token (outside production only, where the
// server logs that token anyway, and only to a request addressed to a loopback name: http/loopback.ts), so a
// local console opens prefilled. The page gets the console's Content-Security-Policy (http/headers.ts); source
// maps are served in development only (they are the whole source, and 3.7 MiB).
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize } from "node:path";
import { projectRoot } from "../../db/database.ts";
import { applySecurityHeaders } from "../http/headers.ts";
import { isLoopbackRequest } from "../http/loopback.ts";

const DIST = join(projectRoot, "console", "dist");
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".map": "application/json", ".svg": "image/svg+xml",
};
const NOT_BUILT = "<!doctype html><title>chatd</title><p>The console is not built: run <code>npm install</code> in the repository.";

/** The file a GET asks for, or null for paths the console does not serve. */
function fileFor(url: string): string | null {
  const path = url.split("?")[0]!;
  if (path === "/console/config.json") return path;
  if (path === "/" || path === "/index.html") return "index.html";
  if (!path.startsWith("/console/")) return null;
  const relative = normalize(path.slice("/console/".length));
  return relative.startsWith("..") || relative.includes("\0") ? null : relative;
}

export function isConsoleRequest(req: IncomingMessage): boolean {
  return (req.method === "GET" || req.method === "HEAD") && fileFor(req.url ?? "") !== null;
}

export interface ConsoleOptions {
  /** Development's token for the `dev` user, or null (production). */
  developmentToken: string | null;
  development: boolean;
}

export async function serveConsole(req: IncomingMessage, res: ServerResponse, options: ConsoleOptions): Promise<void> {
  const file = fileFor(req.url ?? "")!;
  applySecurityHeaders(res, { kind: file === "index.html" ? "page" : "data" });
  if (file === "/console/config.json") {
    const developmentToken = isLoopbackRequest(req) ? options.developmentToken : null;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify({ developmentToken }));
    return;
  }
  try {
    if (extname(file) === ".map" && !options.development) throw new Error("source maps are served in development only");
    const body = await readFile(join(DIST, file));
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-cache" })
      .end(req.method === "HEAD" ? undefined : body);
  } catch {
    if (file === "index.html") res.writeHead(503, { "content-type": "text/html; charset=utf-8" }).end(NOT_BUILT);
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  }
}
