// The useChat endpoint speaks to chatd through its own GraphQL schema, executed in process (grafast, no HTTP
// round trip): the same authentication (the request's Authorization header goes to the preset's context), the
// same row-level security, the same response-format checks before SQL and the same refusal codes as a GraphQL
// client gets. Errors are passed through the API's maskError, so a refusal carries its registered code.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PostGraphileInstance } from "postgraphile";
import { grafast, isAsyncIterable } from "postgraphile/grafast";
import { GraphQLError, type ExecutionResult } from "postgraphile/graphql";
import { maskError } from "../errors.ts";
import { HttpError, statusOfCode, type FieldError } from "../http/errors.ts";

/** A refusal from GraphQL: `code` is the registered extensions.code, its status the HTTP mapper's for that code. */
export class GraphQLRefusal extends HttpError {
  constructor(message: string, code: string, validations: FieldError[] = []) {
    super(statusOfCode(code), code, message, validations);
  }
}

export interface Executor {
  /** Runs a query or mutation as the request's user; resolves with `data` or rejects with a GraphQLRefusal. */
  run<T>(query: string, variables?: Record<string, unknown>): Promise<T>;
  /** Starts a subscription as the request's user; each item is one `data` payload. */
  subscribe<T>(query: string, variables?: Record<string, unknown>): Promise<AsyncIterableIterator<T>>;
}

function refusal(errors: readonly GraphQLError[]): GraphQLRefusal {
  const first = maskError(errors[0] instanceof GraphQLError ? errors[0] : new GraphQLError(String(errors[0])));
  const extensions = first.extensions as { code?: unknown; validations?: unknown };
  const code = typeof extensions.code === "string" ? extensions.code : "GRAPHQL_ERROR";
  const validations = Array.isArray(extensions.validations) ? extensions.validations as { field: string; detail: string }[] : [];
  return new GraphQLRefusal(first.message, code, validations);
}

function dataOf<T>(result: ExecutionResult): T {
  if (result.errors?.length) throw refusal(result.errors);
  return result.data as T;
}

export function executorFor(pgl: PostGraphileInstance, req: IncomingMessage, res: ServerResponse): Executor {
  async function execute(source: string, variableValues: Record<string, unknown>) {
    const { schema, resolvedPreset } = await pgl.getSchemaResult();
    return grafast({ schema, source, variableValues, resolvedPreset, requestContext: { node: { req, res } } });
  }
  return {
    async run<T>(query: string, variables: Record<string, unknown> = {}) {
      const result = await execute(query, variables);
      if (isAsyncIterable(result)) throw new Error("run() was given a subscription");
      return dataOf<T>(result as ExecutionResult);
    },
    async subscribe<T>(query: string, variables: Record<string, unknown> = {}) {
      const result = await execute(query, variables);
      if (!isAsyncIterable(result)) return dataOf<never>(result as ExecutionResult);
      const iterator = (result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]() as AsyncIterator<ExecutionResult>;
      const mapped: AsyncIterableIterator<T> = {
        async next() {
          const step = await iterator.next();
          if (step.done) return { done: true, value: undefined };
          return { done: false, value: dataOf<T>(step.value) };
        },
        async return() {
          await iterator.return?.();
          return { done: true, value: undefined };
        },
        [Symbol.asyncIterator]() {
          return mapped;
        },
      };
      return mapped;
    },
  };
}
