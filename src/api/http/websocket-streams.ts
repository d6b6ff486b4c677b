// The stream bounds of streams.ts for GraphQL over websockets (graphql-ws through grafserv): every operation on a
// socket takes a slot of the same StreamRegistry as the useChat streams (CHATD_STREAMS_PER_USER and _PER_PROCESS
// count both together), so one user cannot hold more by switching transport. A subscription whose client has not
// taken an event within the send deadline has its socket terminated (graphql-ws sends the next event only once the
// previous one is written, so a client that stops reading stalls the send and nothing else piles up), and a socket
// is closed with 4401 when the token it was opened with expires.
import type { IncomingMessage } from "node:http";
import { GraphQLError } from "postgraphile/graphql";
import { identify } from "../auth.ts";
import { HttpError } from "./errors.ts";
import type { StreamLease, StreamRegistry } from "./streams.ts";

/** The few members of a `ws` WebSocket used here (grafserv's socket, in graphql-ws's `ctx.extra`). */
interface Socket {
  close(code: number, reason: string): void;
  terminate(): void;
  once(event: "close", listener: () => void): unknown;
}

/** graphql-ws's close code for a connection whose authorization no longer holds: clients do not retry it. */
const TOKEN_EXPIRED = 4401;

/** The expiry timer of each socket whose operations were admitted with a user's token. */
const expiries = new WeakMap<Socket, NodeJS.Timeout>();
/** The slots each socket holds: released when it closes, whatever became of its operations. */
const held = new WeakMap<Socket, Set<StreamLease>>();

/** `lease`, also released when the socket closes; a released lease leaves the socket's set (long-lived sockets run
 * many operations). */
function hold(socket: Socket, lease: StreamLease): StreamLease {
  let leases = held.get(socket);
  if (!leases) {
    const set = new Set<StreamLease>();
    held.set(socket, set);
    socket.once("close", () => { for (const each of [...set]) each.release(); });
    leases = set;
  }
  const set = leases;
  const tracked: StreamLease = {
    release() {
      set.delete(tracked);
      lease.release();
    },
  };
  set.add(tracked);
  return tracked;
}

function closeAtExpiry(socket: Socket, expiresAtMs: number): void {
  if (expiries.has(socket)) return;
  // setTimeout's delay is a 32-bit int; tokens live at most CHATD_TOKEN_MAX_LIFETIME_DAYS, re-armed below if longer.
  const arm = (): NodeJS.Timeout => setTimeout(() => {
    if (Date.now() < expiresAtMs) expiries.set(socket, arm());
    else socket.close(TOKEN_EXPIRED, "the token expired; reconnect with a fresh token");
  }, Math.min(Math.max(0, expiresAtMs - Date.now()), 2 ** 31 - 1));
  expiries.set(socket, arm());
  socket.once("close", () => clearTimeout(expiries.get(socket)));
}

/**
 * The operation's result with its slot: released when the operation ends, however it ends (its last event, an
 * error, the client's `complete`, the socket closing). Between handing out an event and being asked for the next,
 * the socket's send is under way; when that takes longer than the deadline the socket is terminated. A plain
 * object rather than an async generator: `return()` must act at once, not after the pending `next()`.
 */
function guarded<T>(inner: AsyncIterable<T>, lease: StreamLease, socket: Socket, sendDeadlineMs: number): AsyncGenerator<T> {
  const iterator = inner[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const end = () => {
    clearTimeout(timer);
    lease.release();
  };
  const wrapper: AsyncGenerator<T> = {
    async next() {
      clearTimeout(timer);
      try {
        const step = await iterator.next();
        if (step.done) end();
        else timer = setTimeout(() => { end(); socket.terminate(); }, sendDeadlineMs);
        return step;
      } catch (error) {
        end();
        throw error;
      }
    },
    async return(value) {
      end();
      return await iterator.return?.(value) ?? { done: true, value: value as T };
    },
    async throw(error: unknown) {
      end();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return wrapper;
    },
  };
  return wrapper;
}

interface OperationArgs {
  execute: (args: OperationArgs) => unknown;
  subscribe: (args: OperationArgs) => unknown;
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === "object" && value !== null && Symbol.asyncIterator in value;

/** grafserv middleware: refuses a websocket operation over a cap, holds its slot while it runs, bounds its sends. */
export function websocketStreamsPlugin(secret: string, streams: StreamRegistry): GraphileConfig.Plugin {
  return {
    name: "ChatdWebsocketStreamsPlugin",
    version: "1.0.0",
    grafserv: {
      middleware: {
        async onSubscribe(next, event) {
          const params = event.ctx.connectionParams as Record<string, unknown> | undefined;
          const identity = identify(secret, params?.authorization ?? params?.Authorization);
          const extra = event.ctx.extra as { socket: Socket; request: IncomingMessage };
          // Anonymous operations see nothing private (RLS) but still cost a slot; each address is its own caller.
          const caller = identity.kind === "user" ? identity.userId : `anonymous:${extra.request.socket.remoteAddress ?? ""}`;
          let lease: StreamLease;
          try {
            lease = hold(extra.socket, streams.acquire(caller));
          } catch (error) {
            if (!(error instanceof HttpError)) throw error;
            return [new GraphQLError(error.message, { extensions: { code: error.code } })];
          }
          const result = await next();
          if (result === undefined || Array.isArray(result)) {
            lease.release();
            return result;
          }
          if (identity.kind === "user") closeAtExpiry(extra.socket, identity.expiresAt * 1000);
          const args = result as unknown as OperationArgs;
          const { execute, subscribe } = args;
          const bounded = async (run: (args: OperationArgs) => unknown, self: OperationArgs) => {
            let outcome: unknown;
            try {
              outcome = await run(self);
            } catch (error) {
              lease.release();
              throw error;
            }
            if (isAsyncIterable(outcome)) return guarded(outcome, lease, extra.socket, streams.limits.sendDeadlineMs);
            lease.release();
            return outcome;
          };
          args.execute = (self) => bounded(execute, self);
          args.subscribe = (self) => bounded(subscribe, self);
          return result;
        },
      },
    },
  };
}
