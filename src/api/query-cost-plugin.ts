// Refuses a GraphQL document over its cost limits (query-cost.ts) before grafserv parses, validates, plans or
// executes it: over HTTP in grafserv's processRequest (the body is read once; grafserv reuses the memoized read),
// over websockets in onSubscribe. Also where a caller-dependent rule runs (`refuse`): grafserv caches validation
// per document text, not per caller, so nothing that depends on the caller can be a validation rule.
import type { GraphQLError } from "postgraphile/graphql";
import { normalizeRequest, type GrafservBody, type JSONValue, type Result } from "postgraphile/grafserv";
import { analyzeDocument, DEFAULT_COST_LIMITS, type CostLimits, type DocumentCost } from "./query-cost.ts";

export interface QueryCostOptions {
  limits?: Readonly<CostLimits>;
  /** A further refusal that depends on the caller (the Authorization header or websocket parameter). */
  refuse?: (cost: DocumentCost, authorization: unknown) => GraphQLError | null;
}

interface Request {
  query: string;
  variables: Record<string, unknown> | null;
}

function asRequest(value: unknown): Request | null {
  if (typeof value !== "object" || value === null) return null;
  const { query, variables } = value as { query?: unknown; variables?: unknown };
  if (typeof query !== "string") return null;
  const vars = typeof variables === "object" && variables !== null && !Array.isArray(variables)
    ? variables as Record<string, unknown> : null;
  return { query, variables: vars };
}

/** The query and variables of a POST body, or null when grafserv should report what is wrong with it. */
function readBody(contentType: string | undefined, body: GrafservBody): Request | null {
  const type = contentType?.split(";")[0]?.trim();
  const text = body.type === "buffer" ? body.buffer.toString("utf8") : body.type === "text" ? body.text : null;
  if (type === "application/graphql" && text !== null) return { query: text, variables: null };
  if (type !== "application/json") return null;
  if (body.type === "json") return asRequest(body.json);
  try {
    return asRequest(JSON.parse(text ?? ""));
  } catch {
    return null;
  }
}

function check(request: Request, authorization: unknown, options: QueryCostOptions): GraphQLError | null {
  const { error, cost } = analyzeDocument(request.query, request.variables, options.limits ?? DEFAULT_COST_LIMITS);
  if (error || !cost) return error;
  return options.refuse?.(cost, authorization) ?? null;
}

export const QueryCostPlugin = (options: QueryCostOptions = {}): GraphileConfig.Plugin => ({
  name: "ChatdQueryCostPlugin",
  version: "1.0.0",
  grafserv: {
    middleware: {
      processRequest(next, event) {
        const request = normalizeRequest(event.requestDigest);
        const graphqlPath = event.resolvedPreset.grafserv?.graphqlPath ?? "/graphql";
        if (request.method !== "POST" || request.path !== graphqlPath) return next();
        return (async (): Promise<Result | null> => {
          let raw: GrafservBody;
          try {
            raw = await request.getBody();
          } catch {
            // Too large or unreadable: grafserv reads the same (memoized) body next and answers with its status.
            return next();
          }
          const body = readBody(request.getHeader("content-type"), raw);
          const refusal = body ? check(body, request.getHeader("authorization"), options) : null;
          if (!refusal) return next();
          // A formatted GraphQL error is plain JSON (message, extensions), which the type does not say.
          const json = { errors: [refusal.toJSON()] } as unknown as JSONValue;
          return { type: "json", statusCode: 400, headers: { "content-type": "application/json" }, json };
        })();
      },
      onSubscribe(next, event) {
        const request = asRequest(event.message.payload);
        const params = event.ctx.connectionParams as Record<string, unknown> | undefined;
        const refusal = request ? check(request, params?.authorization ?? params?.Authorization, options) : null;
        return refusal ? [refusal] : next();
      },
    },
  },
});
