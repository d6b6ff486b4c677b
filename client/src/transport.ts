// HTTP (fetch) for queries and mutations, graphql-ws for subscriptions. graphql-ws is told never to retry by
// itself: it would resubscribe with the original variables (the first cursor) and deliver messages twice, so the
// event stream (events.ts) reconnects with its own cursor instead.
import { createClient, type Client } from "graphql-ws";
import { ChatdNetworkError, requestError, type GraphQLErrorEntry } from "./errors.ts";

/** A bearer token, or a function returning one (called for every request and connection, e.g. to refresh it). */
export type TokenSource = string | (() => string | Promise<string>);

export interface TransportOptions {
  /** chatd's GraphQL endpoint, e.g. `http://127.0.0.1:8787/graphql` (a bare origin gets `/graphql`). */
  url: string;
  token?: TokenSource;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** A WebSocket implementation (e.g. the `ws` package); defaults to the global WebSocket (Node 22, browsers). */
  WebSocket?: unknown;
}

export interface GraphQLResult<T> {
  data?: T | null;
  errors?: GraphQLErrorEntry[];
}

export interface SubscriptionSink<T> {
  next(result: GraphQLResult<T>): void;
  error(error: unknown): void;
  complete(): void;
}

function endpoint(url: string): URL {
  const parsed = new URL(url);
  if (parsed.pathname === "/" || parsed.pathname === "") parsed.pathname = "/graphql";
  return parsed;
}

export class Transport {
  readonly url: URL;
  private readonly token: TokenSource | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly webSocketImpl: unknown;
  private ws: Client | null = null;

  constructor(options: TransportOptions) {
    this.url = endpoint(options.url);
    this.token = options.token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.webSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: unknown }).WebSocket;
  }

  private async authorization(): Promise<string | null> {
    if (this.token === undefined) return null;
    const token = typeof this.token === "function" ? await this.token() : this.token;
    return `Bearer ${token}`;
  }

  /** Runs a query or mutation; GraphQL errors become ChatdRequestError, transport failures ChatdNetworkError. */
  async request<T>(query: string, variables: Record<string, unknown> = {}, signal?: AbortSignal): Promise<T> {
    const authorization = await this.authorization();
    let response: Response;
    try {
      response = await this.fetchImpl(this.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ query, variables }),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new ChatdNetworkError(`cannot reach chatd at ${this.url.href}`, null, error);
    }
    let body: GraphQLResult<T>;
    try {
      body = await response.json() as GraphQLResult<T>;
    } catch (error) {
      throw new ChatdNetworkError(`chatd answered HTTP ${response.status} without a GraphQL body`, response.status, error);
    }
    if (body.errors && body.errors.length > 0) throw requestError(body.errors);
    if (!response.ok || body.data == null) {
      throw new ChatdNetworkError(`chatd answered HTTP ${response.status} without data`, response.status);
    }
    return body.data;
  }

  private socket(): Client {
    if (this.ws) return this.ws;
    if (!this.webSocketImpl) throw new ChatdNetworkError("no WebSocket implementation: pass `WebSocket` to createChatdClient", null);
    const wsUrl = new URL(this.url);
    wsUrl.protocol = wsUrl.protocol === "https:" ? "wss:" : "ws:";
    this.ws = createClient({
      url: wsUrl.href,
      webSocketImpl: this.webSocketImpl,
      connectionParams: async () => {
        const authorization = await this.authorization();
        return authorization ? { authorization } : {};
      },
      lazy: true,
      retryAttempts: 0,
    });
    return this.ws;
  }

  /** Starts one subscription; returns the function that ends it. */
  subscribe<T>(query: string, variables: Record<string, unknown>, sink: SubscriptionSink<T>): () => void {
    let socket: Client;
    try {
      socket = this.socket();
    } catch (error) {
      sink.error(error);
      return () => {};
    }
    return socket.subscribe<T>({ query, variables }, {
      next: (value) => sink.next(value as GraphQLResult<T>),
      error: (error) => sink.error(error),
      complete: () => sink.complete(),
    });
  }

  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = null;
    await ws?.dispose();
  }
}
