// The PostGraphile preset: what is exposed (chat_public, through smart tags in sql/085_graphql.sql), how requests
// are authenticated (src/api/auth.ts), the TypeScript checks before SQL (response-format-plugin.ts), the chat
// stream (chat-events-plugin.ts), the error mapping (errors.ts) and the limits.
import type pg from "pg";
import { makePgService } from "postgraphile/adaptors/pg";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { GraphQLError } from "postgraphile/graphql";
import { identify, pgSettingsFor } from "./auth.ts";
import { ChatEventsPlugin } from "./chat-events-plugin.ts";
import { maskError } from "./errors.ts";
import type { ChatListener } from "./listener.ts";
import { introspectionRefusal, NoSuggestionsPlugin, type IntrospectionPolicy } from "./introspection.ts";
import { QueryCostPlugin } from "./query-cost-plugin.ts";
import { ResponseFormatPlugin } from "./response-format-plugin.ts";
import type { StreamRegistry } from "./http/streams.ts";
import { websocketStreamsPlugin } from "./http/websocket-streams.ts";

/** A 64 KiB schema inside a JSON string inside a JSON body, escaped several times over, fits. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
export const STATEMENT_TIMEOUT_MS = 15_000;

export interface PresetOptions {
  /** A pool connected as the API login role (chatd_api). */
  pool: pg.Pool;
  jwtSecret: string;
  /** Ruru (GraphiQL) at `/graphiql`: development only. */
  graphiql: boolean;
  /** Absent when only the schema is built (scripts/export-schema.ts). */
  listener?: ChatListener;
  statementTimeoutMs?: number;
  /** Who may introspect the schema and read suggestions (introspection.ts); `all` when absent. */
  introspection?: IntrospectionPolicy;
  /** The stream caps websocket operations share with the useChat streams; absent when only the schema is built. */
  streams?: StreamRegistry;
}

/** Refuses a websocket operation whose connection carried an invalid token (HTTP is refused in server.ts). */
const WebsocketAuthPlugin = (secret: string): GraphileConfig.Plugin => ({
  name: "ChatdWebsocketAuthPlugin",
  version: "1.0.0",
  grafserv: {
    middleware: {
      onSubscribe(next, event) {
        const params = event.ctx.connectionParams as Record<string, unknown> | undefined;
        const authorization = params?.authorization ?? params?.Authorization;
        const identity = identify(secret, authorization);
        if (identity.kind === "invalid") {
          return [new GraphQLError(identity.reason, { extensions: { code: "UNAUTHENTICATED" } })];
        }
        return next();
      },
    },
  },
});

/** GraphQL's convention for enum values (QUEUE, INTERRUPT, REQUIRES_ACTION); PostGraphile v5 keeps pg's case. */
const UpperCaseEnumsPlugin: GraphileConfig.Plugin = {
  name: "ChatdUpperCaseEnumsPlugin",
  version: "1.0.0",
  inflection: {
    replace: {
      enumValue(previous, options, value, codec) {
        return (previous ? previous(value, codec) : value).toUpperCase();
      },
    },
  },
};

export function makePreset(options: PresetOptions): GraphileConfig.Preset {
  const statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  const introspection = options.introspection ?? "all";
  const cost = QueryCostPlugin({
    refuse: (measured, authorization) =>
      introspectionRefusal(introspection, measured, identify(options.jwtSecret, authorization).kind === "user"),
  });
  return {
    extends: [PostGraphileAmberPreset],
    plugins: [UpperCaseEnumsPlugin, ResponseFormatPlugin, ChatEventsPlugin, cost, WebsocketAuthPlugin(options.jwtSecret),
      ...(options.streams ? [websocketStreamsPlugin(options.jwtSecret, options.streams)] : []),
      ...(introspection === "all" ? [] : [NoSuggestionsPlugin])],
    pgServices: [makePgService({ pool: options.pool, schemas: ["chat_public"], pubsub: false })],
    // Strict functions: arguments without a default are required (non-null) in GraphQL.
    gather: { pgStrictFunctions: true },
    schema: { dontSwallowErrors: true, pgForbidSetofFunctionsToReturnNull: true },
    grafserv: {
      websockets: true,
      graphiql: options.graphiql,
      // `/` is the web console (src/api/ui-chat/console-assets.ts).
      graphiqlPath: "/graphiql",
      graphiqlOnGraphQLGET: options.graphiql,
      maxRequestLength: MAX_REQUEST_BYTES,
      maskError,
    },
    grafast: {
      explain: false,
      timeouts: { planning: 2_000, execution: statementTimeoutMs + 5_000 },
      context(requestContext, args) {
        const authorization = requestContext.node?.req?.headers.authorization
          ?? requestContext.ws?.normalizedConnectionParams?.authorization;
        // Invalid tokens never get here (refused before execution); treat anything else as anonymous.
        const identity = identify(options.jwtSecret, authorization);
        const pgSettings = pgSettingsFor(identity.kind === "invalid" ? { kind: "anonymous" } : identity, statementTimeoutMs);
        return { ...args.contextValue, pgSettings, chatListener: options.listener };
      },
    },
  };
}
