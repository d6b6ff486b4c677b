// The console's calls that are not the useChat stream: a few typed GraphQL operations (chat list, queue, batches)
// and the endpoint's own routes (transcript, stop, response-format check). Small on purpose: the typed client
// package can replace the GraphQL half without touching the views.
import type { UIMessage } from "ai";

export class ApiError extends Error {
  readonly code: string;
  readonly validations: { field: string; detail: string }[];
  constructor(message: string, code: string, validations: { field: string; detail: string }[] = []) {
    super(message);
    this.code = code;
    this.validations = validations;
  }
}

let token = "";
export const setToken = (value: string) => { token = value; };
export const authHeaders = (): Record<string, string> => ({ Authorization: `Bearer ${token}` });

async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch("/graphql", {
    method: "POST", headers: { ...authHeaders(), "content-type": "application/json" }, body: JSON.stringify({ query, variables }),
  });
  const body = await response.json() as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length) throw new ApiError(body.errors[0]!.message, body.errors[0]!.extensions?.code ?? "ERROR");
  return body.data as T;
}

async function rest<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { ...init, headers: { ...authHeaders(), "content-type": "application/json", ...init.headers } });
  const body = await response.json() as T & { error?: { code: string; message: string; validations?: { field: string; detail: string }[] } };
  if (!response.ok) throw new ApiError(body.error?.message ?? response.statusText, body.error?.code ?? String(response.status), body.error?.validations);
  return body;
}

export interface ChatSummary {
  rowId: string;
  title: string | null;
  status: string;
  updatedAt: string;
  pendingRequests: number;
}

export async function whoAmI(): Promise<void> {
  await gql(`{ structuredOutputEnabled }`);
  await rest("/api/response-format/check", { method: "POST", body: JSON.stringify({ responseFormat: '{"type":"text"}' }) });
}

export async function listChats(): Promise<ChatSummary[]> {
  const data = await gql<{ allChats: { nodes: { rowId: string; title: string | null; status: string; updatedAt: string;
    structuredOutputRequestsByChatId: { nodes: { status: string }[] } }[] } }>(
    `{ allChats(orderBy: CREATED_AT_DESC, first: 100) { nodes { rowId title status updatedAt
       structuredOutputRequestsByChatId { nodes { status } } } } }`);
  return data.allChats.nodes.map((chat) => ({ rowId: chat.rowId, title: chat.title, status: chat.status.toLowerCase(),
    updatedAt: chat.updatedAt, pendingRequests: chat.structuredOutputRequestsByChatId.nodes.filter((r) => r.status === "PENDING").length }));
}

export interface QueuedMessage { rowId: string; text: string; structured: boolean }

export async function chatQueue(chatId: string): Promise<QueuedMessage[]> {
  const data = await gql<{ chatByRowId: { queue: { rowId: string; content: { text?: string }[]; structuredOutputRequestId: string | null }[] } | null }>(
    `query($id: UUID!) { chatByRowId(rowId: $id) { queue { rowId content structuredOutputRequestId } } }`, { id: chatId });
  return (data.chatByRowId?.queue ?? []).map((q) => ({ rowId: q.rowId, text: q.content.map((p) => p.text ?? "").join(""),
    structured: q.structuredOutputRequestId !== null }));
}

export const deleteQueued = (rowId: string) =>
  gql(`mutation($id: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $id}) { clientMutationId } }`, { id: rowId });
export const promoteQueued = (rowId: string) =>
  gql(`mutation($id: BigInt!) { promoteQueuedMessage(input: {queuedMessageId: $id}) { clientMutationId } }`, { id: rowId });
export const queueMessage = (chatId: string, text: string, responseFormat: string | null) =>
  gql(`mutation($id: UUID!, $c: JSON!, $rf: String) { sendChatMessage(input: {chatId: $id, content: $c, responseFormat: $rf}) { clientMutationId } }`,
    { id: chatId, c: [{ type: "text", text }], rf: responseFormat });

export interface Transcript { chatId: string; status: string; active: boolean; pendingToolCalls: { tool_call_id: string; tool_name: string }[]; messages: UIMessage[] }
export const transcript = (chatId: string) => rest<Transcript>(`/api/chat/${chatId}/messages`);
export const stopChat = (chatId: string) => rest<{ status: string }>(`/api/chat/${chatId}/stop`, { method: "POST" });
export const checkResponseFormat = (text: string) =>
  rest<{ ok: boolean; errors?: { field: string; detail: string }[] }>("/api/response-format/check", { method: "POST", body: JSON.stringify({ responseFormat: text }) });

export interface BatchSummary {
  rowId: string; name: string | null; status: string; totalItems: number; createdAt: string;
  itemCounts: { pending: number; running: number; succeeded: number; failed: number; canceled: number };
}

export async function listBatches(): Promise<BatchSummary[]> {
  const data = await gql<{ allBatches: { nodes: BatchSummary[] } }>(`{ allBatches(orderBy: CREATED_AT_DESC, first: 100) { nodes {
    rowId name status totalItems createdAt itemCounts { pending running succeeded failed canceled } } } }`);
  return data.allBatches.nodes.map((b) => ({ ...b, status: b.status.toLowerCase() }));
}

export interface BatchResult { line: number; requestId: string | null; status: string; valueJson: string | null; errorCode: string | null; errorMessage: string | null }

/** Every item's result, page by page (receipt values as their exact JSON text). */
export async function batchResults(batchId: string): Promise<BatchResult[]> {
  const out: BatchResult[] = [];
  let after: string | null = null;
  for (;;) {
    type Page = { allBatchItems: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: { line: number; status: string;
      structuredOutputRequestId: string | null; errorCode: string | null; errorMessage: string | null;
      structuredOutputRequestByStructuredOutputRequestId: { chatMessageByReceiptMessageId: { structuredOutput: { valueJson: string | null } | null } | null } | null }[] } };
    const data: Page = await gql<Page>(`query($id: UUID!, $after: Cursor) { allBatchItems(condition: {batchId: $id}, orderBy: LINE_ASC, first: 500, after: $after) {
      pageInfo { hasNextPage endCursor } nodes { line status structuredOutputRequestId errorCode errorMessage
      structuredOutputRequestByStructuredOutputRequestId { chatMessageByReceiptMessageId { structuredOutput { valueJson } } } } } }`, { id: batchId, after });
    for (const item of data.allBatchItems.nodes) {
      out.push({ line: item.line, requestId: item.structuredOutputRequestId, status: item.status.toLowerCase(),
        valueJson: item.structuredOutputRequestByStructuredOutputRequestId?.chatMessageByReceiptMessageId?.structuredOutput?.valueJson ?? null,
        errorCode: item.errorCode, errorMessage: item.errorMessage });
    }
    if (!data.allBatchItems.pageInfo.hasNextPage) return out;
    after = data.allBatchItems.pageInfo.endCursor;
  }
}
