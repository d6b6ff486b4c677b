// A real HTTP server on 127.0.0.1 that speaks the OpenAI Responses, Chat Completions and
// Anthropic Messages streaming protocols, so the provider packages are qualified over
// real sockets and real SSE framing. Each request consumes the next queued
// MockResponse; every request body is captured for assertions.
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicEvents } from "./anthropic.ts";
import { chatEvents } from "./chat.ts";
import { responsesEvents } from "./responses.ts";
import type { MockHold, MockResponse, MockTurn } from "./script.ts";

export interface CapturedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  rawBody: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- request shapes differ per protocol; tests index freely
}

export interface MockProviderServer {
  /** Base URL including `/v1`, for `baseURL` / `ModelConfig.baseUrl`. */
  url: string;
  requests: CapturedRequest[];
  enqueue(...responses: MockResponse[]): void;
  close(): Promise<void>;
}

type Protocol = "chat" | "responses" | "anthropic";

const PATHS: Record<string, Protocol> = {
  "/v1/chat/completions": "chat",
  "/v1/responses": "responses",
  "/v1/messages": "anthropic",
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function eventsFor(protocol: Protocol, turn: MockTurn, model: string): { events: unknown[]; done: boolean } {
  switch (protocol) {
    case "chat":
      return chatEvents(turn, model);
    case "responses":
      return responsesEvents(turn, model);
    case "anthropic":
      return anthropicEvents(turn, model);
  }
}

/** SSE framing per protocol: typed protocols carry an `event:` line like the real APIs. */
function frame(protocol: Protocol, event: unknown): string {
  const data = typeof event === "string" ? event : JSON.stringify(event);
  const type = typeof event === "object" && event != null ? (event as { type?: unknown }).type : undefined;
  const name = protocol !== "chat" && typeof type === "string" ? `event: ${type}\n` : "";
  return `${name}data: ${data}\n\n`;
}

async function writeStream(
  res: ServerResponse,
  protocol: Protocol,
  events: unknown[],
  done: boolean,
  options: { hold?: MockHold; delayMs?: number } = {},
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (let i = 0; i < events.length; i++) {
    if (res.destroyed || res.writableEnded) return;
    if (options.hold != null && i === options.hold.afterEvents) {
      options.hold.reached?.();
      await options.hold.release;
      if (res.destroyed) return;
    }
    if (options.delayMs != null) await new Promise((r) => setTimeout(r, options.delayMs));
    res.write(frame(protocol, events[i]));
  }
  if (options.hold != null && options.hold.afterEvents >= events.length) {
    options.hold.reached?.();
    await options.hold.release;
  }
  if (res.destroyed) return;
  res.end(done ? "data: [DONE]\n\n" : undefined);
}

export async function startMockProvider(initial: MockResponse[] = []): Promise<MockProviderServer> {
  const queue: MockResponse[] = [...initial];
  const requests: CapturedRequest[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    requests.push({ method: req.method ?? "GET", path, headers: req.headers, rawBody, body });
    const protocol = PATHS[path];
    if (protocol == null) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"no such mock route"}}');
      return;
    }
    const next = queue.shift();
    if (next == null) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"mock queue empty"}}');
      return;
    }
    const model = typeof (body as { model?: unknown })?.model === "string" ? (body as { model: string }).model : "mock";
    switch (next.kind) {
      case "http-error":
        res
          .writeHead(next.status, { "content-type": "application/json", ...next.headers })
          .end(JSON.stringify(next.body ?? { error: { message: `mock error ${next.status}` } }));
        return;
      case "fixture": {
        const text = await readFile(next.path, "utf8");
        const lines = text.split("\n").filter((l) => l.trim().length > 0);
        // Lines are written verbatim (the recorded bytes), framed like the live API.
        const events = lines.map((line) => {
          const type = (JSON.parse(line) as { type?: unknown }).type;
          return { line, type };
        });
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (const e of events) {
          const name = protocol !== "chat" && typeof e.type === "string" ? `event: ${e.type}\n` : "";
          res.write(`${name}data: ${e.line}\n\n`);
        }
        res.end("data: [DONE]\n\n");
        return;
      }
      case "raw":
        await writeStream(res, protocol, next.events, next.done ?? protocol === "chat");
        return;
      default: {
        const { events, done } = eventsFor(protocol, next, model);
        await writeStream(res, protocol, events, done && next.truncate !== true, {
          ...(next.hold != null ? { hold: next.hold } : {}),
          ...(next.delayMs != null ? { delayMs: next.delayMs } : {}),
        });
      }
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...responses) => void queue.push(...responses),
    close: () =>
      new Promise<void>((resolve) => {
        // Held responses never finish on their own; drop their sockets.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
