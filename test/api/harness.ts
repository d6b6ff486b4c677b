// A real API server per test file: its own database (cloned from the migrated template), chatd_api as the login
// role, 127.0.0.1 on port 0; HTTP through fetch, subscriptions through the graphql-ws client.
import { randomBytes } from "node:crypto";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { signToken } from "../../src/api/auth.ts";
import { startApi, type ApiOptions, type ApiServer } from "../../src/api/server.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { apiRoleUrl } from "../security/support.ts";

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; validations?: { field: string; detail: string }[] } }[];
}

export interface TestApi {
  db: TestDatabase;
  api: ApiServer;
  apiDatabaseUrl: string;
  secret: string;
  /** Creates a user and returns its id and a valid token. */
  user(name: string): Promise<{ id: string; token: string }>;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GraphQLResponse<T>>;
  ws(token?: string | null): Client;
  close(): Promise<void>;
}

/** `options` override the server's settings (stream caps, transcript page size). */
export async function startTestApi(options: Partial<ApiOptions> = {}): Promise<TestApi> {
  const db = await createTestDatabase();
  const secret = randomBytes(32).toString("hex");
  const apiDatabaseUrl = await apiRoleUrl(db);
  const api = await startApi({ pool: db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl, jwtSecret: secret, development: false, ...options });
  const clients: Client[] = [];
  return {
    db,
    api,
    apiDatabaseUrl,
    secret,
    async user(name) {
      const { rows } = await db.pool.query<{ id: string }>("insert into chat_public.users (name) values ($1) returning id", [name]);
      const id = rows[0]!.id;
      return { id, token: signToken(secret, id) };
    },
    async gql(query, variables = {}, token = null) {
      const response = await fetch(api.graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...(await response.json() as object) };
    },
    ws(token = null) {
      const client = createClient({
        url: api.graphqlUrl.replace(/^http/, "ws"),
        webSocketImpl: WebSocket,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) await client.dispose();
      await api.close();
      await db.drop();
    },
  };
}

export interface EventQueue<T> {
  /** The next event, in order (rejects when the subscription errors or completes first). */
  next(): Promise<T>;
  /** Events received so far and not yet taken. */
  pending(): T[];
  dispose(): void;
}

/** Subscribes and buffers results, so tests await events in order without sleeping. */
export function subscribe<T = Record<string, unknown>>(client: Client, query: string, variables: Record<string, unknown>): EventQueue<GraphQLResponse<T>> {
  const buffered: GraphQLResponse<T>[] = [];
  let waiter: { resolve: (value: GraphQLResponse<T>) => void; reject: (error: unknown) => void } | null = null;
  let ended: unknown = null;
  const dispose = client.subscribe<T>({ query, variables }, {
    next(value) {
      const event = { status: 200, ...value } as GraphQLResponse<T>;
      if (waiter) {
        const { resolve } = waiter;
        waiter = null;
        resolve(event);
      } else {
        buffered.push(event);
      }
    },
    error(error) {
      ended = error ?? new Error("subscription error");
      waiter?.reject(ended);
      waiter = null;
    },
    complete() {
      ended ??= new Error("subscription completed");
      waiter?.reject(ended);
      waiter = null;
    },
  });
  return {
    next() {
      const event = buffered.shift();
      if (event) return Promise.resolve(event);
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => { waiter = { resolve, reject }; });
    },
    pending: () => buffered.splice(0),
    dispose,
  };
}

export const textContent = (text: string) => [{ type: "text", text }];

export const envelope = (name = "report", schema: object = { type: "object" }) =>
  JSON.stringify({ type: "json_schema", json_schema: { name, schema } });
