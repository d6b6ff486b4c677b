// `subscription { chatEvents(chatId, afterMessageId) }`: the GraphQL face of src/api/chat-stream.ts. Each event
// names what changed; `message`, `chat` and `queue` are read through PostGraphile's own resources when the event
// is delivered, as the subscriber (RLS), so a message event shows exactly what a query would show.
import type { PgClient, PgResource, PgSelectStep, WithPgClient } from "postgraphile/@dataplan/pg";
import { access, context, Step, type ExecutionDetails, type GrafastResultsList } from "postgraphile/grafast";
import { extendSchema, gql } from "postgraphile/utils";
import { chatEventStream, type ChatEventValue, type StreamDeps } from "./chat-stream.ts";
import type { ChatListener } from "./listener.ts";

/** A streamable step: one async iterable of chat events per subscription. */
class ChatEventsStep extends Step<AsyncIterable<ChatEventValue>> {
  static override $$export = { moduleName: "chatd", exportName: "ChatEventsStep" };
  override isSyncAndSafe = false;
  private readonly chatIdDep: number;
  private readonly afterDep: number;
  private readonly contextDep: number;

  constructor($chatId: Step, $after: Step) {
    super();
    this.chatIdDep = this.addDependency($chatId);
    this.afterDep = this.addDependency($after);
    this.contextDep = this.addDependency(context());
  }

  override execute({ indexMap, values, stream }: ExecutionDetails): GrafastResultsList<AsyncIterable<ChatEventValue>> {
    if (!stream) throw new Error("ChatEventsStep must be streamed (it backs a subscription)");
    return indexMap((i) => {
      const chatId = values[this.chatIdDep]!.at(i) as string;
      const after = values[this.afterDep]!.at(i) as string | null | undefined;
      // The context built in preset.ts: PostGraphile's withPgClient/pgSettings plus our listener.
      const ctx = values[this.contextDep]!.at(i) as {
        withPgClient: WithPgClient; pgSettings: Record<string, string> | null; chatListener?: ChatListener;
      };
      const listener = ctx.chatListener;
      if (!listener) throw new Error("chatListener is missing from the GraphQL context");
      const deps: StreamDeps = {
        listener,
        withClient: (fn) => ctx.withPgClient(ctx.pgSettings, (client: PgClient) => fn({
          query: async <T>(options: { text: string; values?: unknown[] }) => {
            const result = await client.query<T & Record<string, unknown>>({ text: options.text, values: options.values ?? [] });
            return { rows: result.rows as readonly T[] };
          },
        })),
      };
      return chatEventStream(deps, chatId, after ?? null);
    });
  }
}

export const ChatEventsPlugin = extendSchema((build) => {
  const resources = build.input.pgRegistry.pgResources as Record<string, PgResource>;
  const resource = (name: string) => {
    const found = resources[name];
    if (!found) throw new Error(`resource ${name} is missing`);
    return found;
  };
  const messages = resource("chat_messages");
  const chats = resource("chats");
  const queued = resource("chat_queued_messages");
  return {
    typeDefs: gql`
      """
      One change in a chat. \`type\` is one of: message (a committed row you may see, receipts included; see
      \`message\`), messagePart (a streamed delta of the step being generated; see \`part\`), status, queueUpdate
      (see \`queue\`), actionRequired (client tools to run; see \`pendingToolCalls\`), retry (the provider is being
      retried; see \`retry\`), previewReset (drop streamed parts: a new generation attempt or history changed),
      historyReset (an edit discarded history; re-read the transcript).
      """
      type ChatEvent {
        type: String!
        chatId: UUID!
        snapshotVersion: BigInt!
        historyVersion: BigInt!
        generationAttempt: BigInt!
        queueVersion: BigInt!
        "The message, on message events."
        message: ChatMessage
        "The chat as it is now."
        chat: Chat
        "The status, on status and actionRequired events."
        status: ChatStatus
        archived: Boolean
        "The queue in order, on queueUpdate events (empty otherwise)."
        queue: [ChatQueuedMessage!]!
        "[{tool_call_id, tool_name}], on actionRequired events."
        pendingToolCalls: JSON
        "{attempt, max_attempts, delay_ms, retrying_at, error}, on retry events."
        retry: JSON
        part: ChatMessagePart
      }

      "A streamed delta, tagged with the generation episode it belongs to. Not a result: only receipts carry results."
      type ChatMessagePart {
        historyVersion: BigInt!
        generationAttempt: BigInt!
        seq: BigInt!
        "The delta as the worker published it."
        data: JSON
      }

      extend type Subscription {
        """
        Live events of a chat you own. Messages with \`rowId\` greater than \`afterMessageId\` (all when omitted)
        are delivered first, then every change as it commits; reconnect with the last \`rowId\` you received.
        """
        chatEvents(chatId: UUID!, afterMessageId: BigInt): ChatEvent
      }
    `,
    objects: {
      Subscription: {
        plans: {
          chatEvents: {
            subscribePlan(_$root, fieldArgs) {
              return new ChatEventsStep(fieldArgs.getRaw("chatId"), fieldArgs.getRaw("afterMessageId"));
            },
            plan($event: Step) {
              return $event;
            },
          },
        },
      },
      ChatEvent: {
        plans: {
          message: ($event: Step) => messages.get({ id: access($event, "messageId") }),
          chat: ($event: Step) => chats.get({ id: access($event, "chatId") }),
          queue($event: Step) {
            const $queue = queued.find({ chat_id: access($event, "queueChatId") }) as PgSelectStep;
            $queue.orderBy({ attribute: "position", direction: "ASC" });
            return $queue;
          },
        },
      },
    },
  };
});
