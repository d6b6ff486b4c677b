// The HTTP entry point: PostGraphile v5 on grafserv over node:http, with websockets (graphql-ws) for
// subscriptions, `/health`, the web console at `/` and its useChat endpoint under `/api/` (src/api/ui-chat/), the
// OpenAI-compatible `/v1/responses` and `/v1/chat/completions` (src/api/openai/), and
// Ruru (GraphiQL) at `/graphiql` in development only (NODE_ENV !== "production").
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type pg from "pg";
import { postgraphile } from "postgraphile";
import { grafserv } from "postgraphile/grafserv/node";
import { createPool } from "../db/pool.ts";
import { logger } from "../log.ts";
import { resolveApiConnection } from "./api-role.ts";
import { identify, maxTokenLifetimeSeconds, resolveJwtSecret, signToken } from "./auth.ts";
import { HttpError, sendError } from "./http/errors.ts";
import { applySecurityHeaders } from "./http/headers.ts";
import { StreamRegistry, streamLimitsFromEnv, type StreamLimits } from "./http/streams.ts";
import { isLoopbackRequest } from "./http/loopback.ts";
import { introspectionPolicy } from "./introspection.ts";
import { metricsAllowed } from "./metrics-access.ts";
import { ChatListener } from "./listener.ts";
import { makePreset } from "./preset.ts";
import { ruruDefaults } from "./ruru-defaults.ts";
import { isConsoleRequest, serveConsole } from "./ui-chat/console-assets.ts";
import { createUiChatHandler } from "./ui-chat/handler.ts";
import { transcriptPageBytesFromEnv } from "./ui-chat/history.ts";
import { createOpenAIHandler } from "./openai/handler.ts";
import { bindMetricsDatabase, metricsHandler } from "../metrics.ts";
import { directUrl } from "../db/pooler.ts";

export interface ApiServer {
  /** Base URL (`http://host:port`). */
  url: string;
  /** `${url}/graphql`; websockets use the same path with ws://. */
  graphqlUrl: string;
  /** Development only: a token for the `dev` user (the caller shows it). */
  developmentToken?: string;
  /** Streams (useChat SSE) open now, all users together. */
  openStreams(): number;
  close(): Promise<void>;
}

export interface ApiOptions {
  /**
   * The owner's pool (DATABASE_URL), for start-up only: the API role's password when chatd manages it (no
   * apiDatabaseUrl, no CHATD_API_DATABASE_URL) and, in development, the `dev` user. The server queries it no more
   * once startApi resolves, so the caller may end it then; production with an API connection string needs none.
   */
  pool?: pg.Pool;
  port: number;
  host: string;
  /** Connection string for chatd_api; else CHATD_API_DATABASE_URL, else derived from the owner's pool (api-role.ts). */
  apiDatabaseUrl?: string;
  jwtSecret?: string;
  /** Defaults to NODE_ENV !== "production": Ruru, plus a logged token for the `dev` user. */
  development?: boolean;
  statementTimeoutMs?: number;
  /** Stream caps and send deadline; else from CHATD_STREAMS_PER_USER, CHATD_STREAMS_PER_PROCESS, CHATD_STREAM_SEND_DEADLINE_MS. */
  streamLimits?: StreamLimits;
  /** The most one page of GET /api/chat/:id/messages holds; else CHATD_TRANSCRIPT_PAGE_BYTES (1 MiB). */
  transcriptPageBytes?: number;
}

const GRACE_MS = 10_000;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Creates the `dev` user when missing and returns a token for it (development convenience). */
async function developmentToken(pool: pg.Pool, secret: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `insert into chat_public.users (name) values ('dev') on conflict (name) do update set name = excluded.name returning id`);
  return signToken(secret, rows[0]!.id);
}

/** Ruru: `/graphiql`, and a GET of `/graphql` that asks for HTML (graphiqlOnGraphQLGET). */
function isRuruRequest(req: IncomingMessage): boolean {
  const path = (req.url ?? "").split("?")[0];
  return path === "/graphiql" || (path === "/graphql" && req.method === "GET" && (req.headers.accept ?? "").includes("text/html"));
}

export async function startApi(options: ApiOptions): Promise<ApiServer> {
  const development = options.development ?? process.env.NODE_ENV !== "production";
  process.env.GRAPHILE_ENV ??= development ? "development" : "production";
  const jwtSecret = options.jwtSecret ?? resolveJwtSecret();
  // Read at every token check; a bad value stops the start instead of failing each request.
  maxTokenLifetimeSeconds();
  const streams = new StreamRegistry(options.streamLimits ?? streamLimitsFromEnv());
  const transcriptPageBytes = options.transcriptPageBytes ?? transcriptPageBytesFromEnv();
  const apiUrl = options.apiDatabaseUrl ?? await resolveApiConnection(options.pool, options.pool?.options.connectionString);
  // Everything the server does after start-up runs on the API's login: /health, the gauges of /metrics (through
  // chat_private.service_gauges, sql/140) and GraphQL.
  const apiPool = createPool({ connectionString: apiUrl, max: 10, pooled: true }, logger, "api");
  bindMetricsDatabase(apiPool);
  const listener = new ChatListener(directUrl(apiUrl));
  const token = development && options.pool != null ? await developmentToken(options.pool, jwtSecret) : undefined;
  const pgl = postgraphile({
    extends: [makePreset({
      pool: apiPool, jwtSecret, graphiql: development, listener, statementTimeoutMs: options.statementTimeoutMs,
      introspection: introspectionPolicy(development), streams,
    })],
    ...(token != null ? { ruru: ruruDefaults(token) } : {}),
  });
  const serv = pgl.createServ(grafserv);
  // createHandler (rather than addTo) lets /health and the token check run first.
  const graphql = serv.createHandler();
  const upgrade = await serv.getUpgradeHandler();
  const uiChat = createUiChatHandler(pgl, streams, transcriptPageBytes);
  const consoleOptions = { developmentToken: token ?? null, development };
  const openai = createOpenAIHandler({ pool: apiPool, listener, jwtSecret, streams });

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const ruru = development && isRuruRequest(req);
    applySecurityHeaders(res, { kind: ruru ? "devtool" : "data" });
    if (ruru && !isLoopbackRequest(req)) {
      // Ruru's page carries the development token: a DNS-rebinding page must not read it.
      sendError(res, new HttpError(403, "FORBIDDEN", "Ruru is served only to a loopback Host (localhost, 127.0.0.1, [::1])"));
      return;
    }
    if (req.url === "/metrics") {
      const access = metricsAllowed(development, req.headers.authorization);
      if (access === "ok") void metricsHandler(req, res);
      else json(res, access === "disabled" ? 404 : 401, { errors: [{ message: access === "disabled"
        ? "/metrics is off on the API port in production: set CHATD_METRICS_TOKEN, or scrape the worker's metrics port"
        : "/metrics needs Authorization: Bearer <CHATD_METRICS_TOKEN>" }] });
      return;
    }
    if (req.url === "/health") {
      apiPool.query("select 1").then(
        () => json(res, 200, { ok: true }),
        () => json(res, 503, { ok: false, reason: "database unavailable" }),
      );
      return;
    }
    if (isConsoleRequest(req)) {
      void serveConsole(req, res, consoleOptions);
      return;
    }
    // The OpenAI-compatible routes answer auth failures in OpenAI's error shape themselves.
    if (openai.matches(req)) {
      openai.handle(req, res);
      return;
    }
    const identity = identify(jwtSecret, req.headers.authorization);
    if (identity.kind === "invalid") {
      // A bad token is refused, not downgraded to anonymous, so that clients notice.
      json(res, 401, { errors: [{ message: identity.reason, extensions: { code: "UNAUTHENTICATED" } }] });
      return;
    }
    if (uiChat.matches(req)) {
      uiChat.handle(req, res, identity);
      return;
    }
    graphql(req, res, () => json(res, 404, { errors: [{ message: "not found; GraphQL is served at /graphql" }] }));
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // Websocket sockets leave the HTTP server's bookkeeping; remember them to close them on shutdown.
  const upgraded = new Set<Socket>();
  server.on("upgrade", (_req: IncomingMessage, socket: Socket) => {
    upgraded.add(socket);
    socket.on("close", () => upgraded.delete(socket));
  });
  if (upgrade) server.on("upgrade", upgrade);
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  logger.info({ graphql: `${url}/graphql`, console: `${url}/`, graphiql: development ? `${url}/graphiql` : undefined }, "GraphQL API listening");

  let closing: Promise<void> | null = null;
  const close = async () => {
    // Stop accepting, end the streams (clients resubscribe with afterMessageId elsewhere), let in-flight HTTP
    // requests finish within the grace period, then release the database.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await listener.close();
    for (const socket of upgraded) socket.destroy();
    const timer = setTimeout(() => { for (const socket of sockets) socket.destroy(); }, GRACE_MS);
    await closed;
    clearTimeout(timer);
    await pgl.release(); // also releases the grafserv instance
    await apiPool.end();
  };
  return { url, graphqlUrl: `${url}/graphql`, ...(token != null ? { developmentToken: token } : {}), openStreams: () => streams.open,
    close: () => (closing ??= close()) };
}
