// ChatdLanguageModel: a LanguageModelV4 whose calls run in chatd (see turn.ts). doGenerate collects a turn;
// doStream streams it: committed assistant text and reasoning as they commit (never a provider attempt that chatd
// later retried), then the receipt's value text, the paused tool calls, and the finish with usage.
import type {
  LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4FinishReason, LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart, LanguageModelV4StreamResult, LanguageModelV4Usage, SharedV4Warning,
} from "@ai-sdk/provider";
import type { ChatdClient } from "../client.ts";
import { followTurn, startTurn, type Session, type TurnOutput, type Usage } from "./turn.ts";

/** Paused tool calls remembered per provider (the fallback when a prompt does not carry providerMetadata back). */
const MAX_SESSIONS = 1000;

const IGNORED = ["maxOutputTokens", "temperature", "stopSequences", "topP", "topK", "presencePenalty", "frequencyPenalty", "seed"] as const;

function warningsFor(options: LanguageModelV4CallOptions): SharedV4Warning[] {
  const warnings: SharedV4Warning[] = IGNORED.filter((name) => options[name] !== undefined)
    .map((name) => ({ type: "unsupported", feature: name, details: "chatd's model config decides this" }));
  if (options.toolChoice && options.toolChoice.type !== "auto") warnings.push({ type: "unsupported", feature: `toolChoice ${options.toolChoice.type}` });
  return warnings;
}

function usageOf(usage: Usage): LanguageModelV4Usage {
  return {
    inputTokens: { total: usage.inputTokens, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: usage.outputTokens, text: undefined, reasoning: usage.reasoningTokens },
  };
}

const finishReason = (reason: "stop" | "tool-calls"): LanguageModelV4FinishReason => ({ unified: reason, raw: reason });
const metadata = (session: Session) => ({ chatd: { chatId: session.chatId, requestId: session.requestId } });

export class ChatdLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = "v4";
  readonly provider = "chatd";
  /** The chatd model config id, or "default" for the server's default. */
  readonly modelId: string;
  readonly supportedUrls = {};
  private readonly client: ChatdClient;
  private readonly configId: string | undefined;
  private readonly sessions: Map<string, Session>;

  constructor(client: ChatdClient, modelConfigId: string | undefined, sessions: Map<string, Session>) {
    this.client = client;
    this.configId = modelConfigId;
    this.modelId = modelConfigId ?? "default";
    this.sessions = sessions;
  }

  /** Remembers a paused call's chat; the oldest entries go first, so calls the SDK never continues do not pile up. */
  private remember(output: TurnOutput): void {
    if (output.type !== "tool-call") return;
    this.sessions.set(output.toolCallId, output.session);
    for (const key of this.sessions.keys()) {
      if (this.sessions.size <= MAX_SESSIONS) break;
      this.sessions.delete(key);
    }
  }

  /** Runs the turn; on abort, interrupts the chat (best effort) so the request ends in chatd too. */
  private async *run(options: LanguageModelV4CallOptions, warnings: SharedV4Warning[]): AsyncGenerator<TurnOutput> {
    const started = await startTurn(this.client, this.configId, options, this.sessions, warnings);
    try {
      for await (const output of followTurn(this.client, started, options.abortSignal)) {
        this.remember(output);
        yield output;
      }
    } catch (error) {
      if (options.abortSignal?.aborted) await this.client.chats.interrupt(started.session.chatId).catch(() => {});
      throw error;
    }
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const warnings = warningsFor(options);
    const content: LanguageModelV4Content[] = [];
    for await (const output of this.run(options, warnings)) {
      if (output.type === "text" || output.type === "reasoning") content.push({ type: output.type, text: output.text });
      if (output.type === "tool-call") {
        content.push({ type: "tool-call", toolCallId: output.toolCallId, toolName: output.toolName, input: output.input,
          providerMetadata: metadata(output.session) });
      }
      if (output.type === "finish") {
        return {
          content, finishReason: finishReason(output.reason), usage: usageOf(output.usage), warnings,
          ...(output.valueJson !== null ? { structuredOutputText: output.valueJson } : {}),
          providerMetadata: metadata(output.session),
          response: { id: output.session.chatId, modelId: this.modelId },
        };
      }
    }
    throw new Error("the chatd turn ended without a finish");
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const warnings = warningsFor(options);
    const outputs = this.run(options, warnings);
    // Start the turn now, so that refusals (bad schema, unknown chat) reject doStream itself.
    const first = await outputs.next();
    let index = 0;
    const parts = function* (output: TurnOutput, modelId: string): Generator<LanguageModelV4StreamPart> {
      if (output.type === "text" || output.type === "reasoning") {
        const id = `${output.type}-${index++}`;
        yield { type: `${output.type}-start`, id };
        yield { type: `${output.type}-delta`, id, delta: output.text };
        yield { type: `${output.type}-end`, id };
      } else if (output.type === "tool-call") {
        yield { type: "tool-call", toolCallId: output.toolCallId, toolName: output.toolName, input: output.input, providerMetadata: metadata(output.session) };
      } else {
        yield { type: "response-metadata", id: output.session.chatId, modelId };
        yield { type: "finish", finishReason: finishReason(output.reason), usage: usageOf(output.usage), providerMetadata: metadata(output.session) };
      }
    };
    const modelId = this.modelId;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      async start(controller) {
        controller.enqueue({ type: "stream-start", warnings });
        if (!first.done) for (const part of parts(first.value, modelId)) controller.enqueue(part);
      },
      async pull(controller) {
        try {
          const next = await outputs.next();
          if (next.done) {
            controller.close();
            return;
          }
          for (const part of parts(next.value, modelId)) controller.enqueue(part);
        } catch (error) {
          controller.enqueue({ type: "error", error });
          controller.close();
        }
      },
      async cancel() {
        await outputs.return(undefined);
      },
    });
    return { stream };
  }
}
