// The console's calls that are not the useChat stream: chatd's GraphQL API through the typed client
// (@chatd/client: chats, queue, batches, interrupt) and the endpoint's own REST routes (the transcript as UI
// messages, the response-format check). Both throw ChatdError, whose `code` and `validations` the views show.
import type { UIMessage } from "ai";
import { ChatdError, createChatdClient, type PendingToolCall, type Validation } from "@chatd/client";

let token = "";
export const setToken = (value: string) => { token = value; };
export const authHeaders = (): Record<string, string> => ({ Authorization: `Bearer ${token}` });

/** HTTP only: the console follows chats through the useChat stream, so the client's websocket is never opened. */
export const chatd = createChatdClient({ url: new URL("/graphql", window.location.origin).href, token: () => token });

async function rest<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { ...init, headers: { ...authHeaders(), "content-type": "application/json", ...init.headers } });
  const body = await response.json() as T & { error?: { code: string; message: string; validations?: Validation[] } };
  if (!response.ok) {
    throw new ChatdError(body.error?.message ?? response.statusText, { code: body.error?.code ?? String(response.status),
      validations: body.error?.validations });
  }
  return body;
}

/** Checks the token against both halves of the API the console uses. */
export async function whoAmI(): Promise<void> {
  await chatd.request("{ structuredOutputEnabled }");
  await checkResponseFormat('{"type":"text"}');
}

export interface Transcript { chatId: string; status: string; active: boolean; pendingToolCalls: PendingToolCall[]; messages: UIMessage[] }

/** The whole transcript, page by page (docs/http.md#transcripts): a turn cut between pages continues its message. */
export async function transcript(chatId: string): Promise<Transcript> {
  const path = `/api/chat/${chatId}/messages`;
  let page = await rest<Transcript & { next: string | null }>(path);
  const messages = page.messages;
  while (page.next !== null) {
    page = await rest<Transcript & { next: string | null }>(`${path}?after=${encodeURIComponent(page.next)}`);
    const [first, ...others] = page.messages;
    const last = messages.at(-1);
    if (first && last?.id === first.id) last.parts.push(...first.parts);
    else if (first) messages.push(first);
    messages.push(...others);
  }
  return { ...page, messages };
}
export const checkResponseFormat = (text: string) =>
  rest<{ ok: boolean; errors?: Validation[] }>("/api/response-format/check", { method: "POST", body: JSON.stringify({ responseFormat: text }) });

/** A refusal of POST /api/chat as the SDK reports it: an APICallError whose body is the endpoint's JSON error. */
export function streamError(error: Error): ChatdError {
  const body = (error as { responseBody?: unknown }).responseBody;
  let parsed: { error?: { code: string; message: string; validations?: Validation[] } } = {};
  try {
    parsed = typeof body === "string" ? JSON.parse(body) as typeof parsed : {};
  } catch {
    // Not the endpoint's answer (a proxy's page, a dropped stream): the SDK's message is all there is.
  }
  return parsed.error ? new ChatdError(parsed.error.message, { code: parsed.error.code, validations: parsed.error.validations })
    : new ChatdError(error.message, { code: "STREAM_FAILED" });
}

/** "CODE: message" for an error of either half. */
export const errorText = (error: unknown) => (error instanceof ChatdError ? `${error.code}: ${error.message}` : String(error));
