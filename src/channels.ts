// The NOTIFY channels the SQL transitions publish on (sql/010 notify_chat, sql/070 commit_step, sql/095
// notify_batch), named once for the TypeScript side: the worker, the GraphQL streams and the CLI listen on them.

/** Status hints of one chat: every transition. */
export const chatChannel = (chatId: string): string => `chatd:chat:${chatId}`;
/** Part deltas of one chat's running step, in sequence order. */
export const partsChannel = (chatId: string): string => `${chatChannel(chatId)}:parts`;
/** What a running step must hear at once (interrupts, edits), for every worker. */
export const WORKER_CHANNEL = "chatd:worker";
/** Progress of one batch. */
export const batchChannel = (batchId: string): string => `chatd:batch:${batchId}`;
