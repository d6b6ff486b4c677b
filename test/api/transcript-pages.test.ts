// GET /api/chat/:id/messages in pages (src/api/ui-chat/history.ts), against a live API and worker with the
// scripted provider: a transcript larger than the page cap comes back in pages that each stay within the cap and
// reassemble to the transcript read whole; the cap holds at N and refuses N + 1; a turn cut between pages keeps
// its message id; a forged cursor is a 400 naming `after`; the setting refuses a bad value.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { UIMessage } from "ai";
import { startApi, type ApiServer } from "../../src/api/server.ts";
import { DEFAULT_TRANSCRIPT_PAGE_BYTES, transcriptPageBytesFromEnv } from "../../src/api/ui-chat/history.ts";
import { waitFor, waitForStatus } from "../support/worker.ts";
import { startLiveStack, type LiveStack } from "./live-stack.ts";
import { textContent } from "./harness.ts";

const CAP = 24 * 1024;
const FILE = "0123456789abcdef".repeat(512); // 8 KiB: three tool results fill a page
let stack: LiveStack;
let token: string;
const extraApis: ApiServer[] = [];

test.before(async () => {
  stack = await startLiveStack(["alice"], { transcriptPageBytes: CAP });
  token = stack.users.alice!.token;
  await writeFile(join(stack.workspacesRoot, "ws", "eight.txt"), FILE);
});
test.after(async () => {
  for (const api of extraApis) await api.close();
  await stack.close();
});

/** An API on the same database with another page cap. */
async function apiWithCap(transcriptPageBytes: number): Promise<ApiServer> {
  const api = await startApi({ port: 0, host: "127.0.0.1", apiDatabaseUrl: stack.t.apiDatabaseUrl, jwtSecret: stack.t.secret,
    development: false, transcriptPageBytes });
  extraApis.push(api);
  return api;
}

const script = (steps: object[]) => textContent(JSON.stringify({ script: steps }));

/** A chat of two turns: `firstTurn` steps, then a one-line answer; waits until both are done. */
async function chatOf(firstTurn: object[]): Promise<string> {
  const created = await stack.t.gql<{ createChat: { result: { chatId: string } } }>(
    `mutation($c: JSON!) { createChat(input: {content: $c, workspace: "ws"}) { result { chatId } } }`, { c: script(firstTurn) }, token);
  const chatId = created.data!.createChat.result.chatId;
  await waitForStatus(stack.t.db, chatId, "waiting");
  const sent = await stack.t.gql(`mutation($id: UUID!, $c: JSON!) { sendChatMessage(input: {chatId: $id, content: $c}) { result { messageId } } }`,
    { id: chatId, c: script([{ text: "the second answer" }]) }, token);
  assert.is(sent.errors, undefined);
  await waitFor("the second turn", async () => {
    const { rows } = await stack.t.db.pool.query<{ done: boolean }>(
      `select c.status = 'waiting' and exists (select from chat_public.chat_messages m where m.chat_id = c.id and m.role = 'assistant'
         and m.content::text like '%the second answer%') as done from chat_public.chats c where c.id = $1`, [chatId]);
    return rows[0]!.done;
  });
  return chatId;
}

interface Page { messages: UIMessage[]; next: string | null; status: string; link: string | null }

async function page(base: string, chatId: string, after?: string): Promise<Page> {
  const response = await fetch(`${base}/api/chat/${chatId}/messages${after === undefined ? "" : `?after=${after}`}`,
    { headers: { authorization: `Bearer ${token}` } });
  assert.is(response.status, 200);
  return { ...await response.json() as Omit<Page, "link">, link: response.headers.get("link") };
}

async function allPages(base: string, chatId: string): Promise<Page[]> {
  const pages = [await page(base, chatId)];
  while (pages.at(-1)!.next !== null) pages.push(await page(base, chatId, pages.at(-1)!.next!));
  return pages;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
/** The page's size as the cap counts it (docs/http.md): user messages whole, assistant messages by their parts. */
const sizeOf = (messages: UIMessage[]) => messages.reduce((sum, m) => sum + (m.role === "user" ? bytes(m)
  : m.parts.reduce((s, part) => s + bytes(part), 0)), 0);

/** Pages joined as a client joins them: a message continued on the next page gets that page's parts. */
function reassemble(pages: Page[]): UIMessage[] {
  const out: UIMessage[] = [];
  for (const { messages } of pages) {
    for (const message of messages) {
      const last = out.at(-1);
      if (last?.id === message.id) last.parts.push(...message.parts);
      else out.push(structuredClone(message));
    }
  }
  return out;
}

test("a transcript larger than the page cap comes back in pages within the cap that reassemble to the whole", async () => {
  const read = (n: number) => ({ text: `step ${n}`, tool_calls: [{ name: "read_file", args: { path: "eight.txt" } }] });
  const chatId = await chatOf([read(1), read(2), read(3), read(4), read(5), read(6), read(7), read(8), { text: "first answer" }]);
  const whole = await page((await apiWithCap(DEFAULT_TRANSCRIPT_PAGE_BYTES)).url, chatId);
  assert.is(whole.next, null);
  assert.ok(sizeOf(whole.messages) > 2 * CAP, `the transcript (${sizeOf(whole.messages)} bytes) is larger than two pages`);

  const pages = await allPages(stack.t.api.url, chatId);
  assert.ok(pages.length >= 3, `${pages.length} pages`);
  for (const [i, p] of pages.entries()) {
    assert.ok(sizeOf(p.messages) <= CAP, `page ${i} holds ${sizeOf(p.messages)} bytes, over the cap ${CAP}`);
    assert.is(p.link, p.next === null ? null : `</api/chat/${chatId}/messages?after=${p.next}>; rel="next"`);
  }
  // The first turn is cut between pages: the continuation is the same message, so a client appends its parts.
  assert.is(pages[1]!.messages[0]!.id, pages[0]!.messages.at(-1)!.id);
  assert.equal(reassemble(pages), whole.messages);
});

test("the page cap holds at N and cuts at N + 1: a page of exactly the cap is whole, one byte more is cut", async () => {
  const chatId = await chatOf([{ text: "the first answer" }]);
  const whole = await page(stack.t.api.url, chatId);
  assert.is(whole.messages.length, 4);
  const firstTurn = sizeOf(whole.messages.slice(0, 2));
  const atCap = await page((await apiWithCap(firstTurn)).url, chatId);
  assert.equal(atCap.messages, whole.messages.slice(0, 2), "N bytes fit a cap of N");
  const overCap = await page((await apiWithCap(firstTurn - 1)).url, chatId);
  assert.equal(overCap.messages, whole.messages.slice(0, 1), "N bytes do not fit a cap of N - 1: the turn goes to the next page");
  assert.equal((await page(stack.t.api.url, chatId, overCap.next!)).messages.slice(0, 1), whole.messages.slice(1, 2));
});

test("a cursor that is not a page's `next` is a 400 naming `after`", async () => {
  const chatId = await chatOf([{ text: "short" }]);
  for (const bad of ["x", "1.2.3", "-1", "99999999999999999999"]) {
    const response = await fetch(`${stack.t.api.url}/api/chat/${chatId}/messages?after=${bad}`, { headers: { authorization: `Bearer ${token}` } });
    assert.is(response.status, 400, bad);
    const body = await response.json() as { error: { code: string; validations: { field: string }[] } };
    assert.equal([body.error.code, body.error.validations[0]!.field], ["INVALID_INPUT", "after"]);
  }
});

test("CHATD_TRANSCRIPT_PAGE_BYTES: 1 MiB by default, a positive integer otherwise", () => {
  assert.is(transcriptPageBytesFromEnv({}), 1024 * 1024);
  assert.is(transcriptPageBytesFromEnv({ CHATD_TRANSCRIPT_PAGE_BYTES: "4096" }), 4096);
  for (const bad of ["0", "-5", "1.5", "lots"]) {
    assert.throws(() => transcriptPageBytesFromEnv({ CHATD_TRANSCRIPT_PAGE_BYTES: bad }), /CHATD_TRANSCRIPT_PAGE_BYTES/);
  }
});

test.run();
