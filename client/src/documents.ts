// The GraphQL documents the client sends (chatd's schema.graphql is the contract).

const MESSAGE = `rowId chatId role kind visibility content structuredOutputRequestId usage createdAt
  structuredOutput { requestId status valueJson error { code message } }`;
const INPUT = "chatId messageId queuedMessageId structuredOutputRequestId receiptMessageIds";
const CHAT = "rowId status archived modelConfigId pendingToolCalls lastError snapshotVersion";

export const CREATE_CHAT = `mutation($input: CreateChatInput!) { createChat(input: $input) { result { ${INPUT} } } }`;
export const SEND_MESSAGE = `mutation($input: SendChatMessageInput!) { sendChatMessage(input: $input) { result { ${INPUT} } } }`;
export const EDIT_MESSAGE = `mutation($input: EditChatMessageInput!) { editChatMessage(input: $input) { result { ${INPUT} } } }`;
export const DELETE_QUEUED = `mutation($id: BigInt!) { deleteQueuedMessage(input: {queuedMessageId: $id}) { result { ${INPUT} } } }`;
export const PROMOTE_QUEUED = `mutation($id: BigInt!) { promoteQueuedMessage(input: {queuedMessageId: $id}) { result { ${INPUT} } } }`;
export const INTERRUPT = `mutation($id: UUID!) { interruptChat(input: {chatId: $id}) { result { ${CHAT} } } }`;
export const SUBMIT_TOOL_RESULTS = `mutation($id: UUID!, $results: JSON!) {
  submitToolResults(input: {chatId: $id, results: $results}) { result { ${CHAT} } } }`;
export const GET_CHAT = `query($id: UUID!) { chatByRowId(rowId: $id) { ${CHAT} } }`;
/** `condition: {kind: null}` would mean "kind is null", so the condition is only written when a kind is asked for. */
export const messagesQuery = (withKind: boolean) => `query($id: UUID!, $after: BigInt, $first: Int${withKind ? ", $kind: MessageKind" : ""}) {
  chatByRowId(rowId: $id) { messages(afterId: $after, first: $first${withKind ? ", condition: {kind: $kind}" : ""}) {
    nodes { ${MESSAGE} } } } }`;
export const LAST_MESSAGE_ID = `query($id: UUID!) { chatByRowId(rowId: $id) {
  chatMessagesByChatId(orderBy: ROW_ID_DESC, first: 1) { nodes { rowId } } } }`;
export const LIST_CHATS = `query($first: Int) { allChats(orderBy: CREATED_AT_DESC, first: $first) { nodes {
  rowId title status archived workspace createdAt updatedAt pendingStructuredRequests } } }`;
export const CHAT_QUEUE = `query($id: UUID!) { chatByRowId(rowId: $id) { queue { rowId chatId content structuredOutputRequestId createdAt } } }`;
export const LIST_BATCHES = `query($first: Int) { allBatches(orderBy: CREATED_AT_DESC, first: $first) { nodes {
  rowId name status totalItems concurrency workspace modelConfigId error createdAt finishedAt
  itemCounts { pending running succeeded failed canceled } } } }`;
export const BATCH_ITEMS = `query($id: UUID!, $after: Cursor, $first: Int!) {
  allBatchItems(condition: {batchId: $id}, orderBy: LINE_ASC, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes { line status chatId structuredOutputRequestId errorCode errorMessage
      structuredOutputRequestByStructuredOutputRequestId { chatMessageByReceiptMessageId { structuredOutput { valueJson } } } } } }`;
export const CHAT_EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type chatId snapshotVersion historyVersion generationAttempt status archived pendingToolCalls retry
  message { ${MESSAGE} } part { historyVersion generationAttempt seq data } } }`;
