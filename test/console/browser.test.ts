// The console in headless Chromium (Debian's /usr/bin/chromium through playwright-core; .ci/run installs it)
// against a live API and worker: the scripted provider, or the mock provider held with barriers where a turn must
// be caught in the middle. Elements are found by their accessible names. Screenshots go to a temp folder
// (CHATD_CONSOLE_SCREENSHOTS, else a new one under the OS temp dir), never into the repository.
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { barrier } from "../support/mock-providers/index.ts";
import { startLiveStack, type LiveStack } from "../api/live-stack.ts";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
const BIG = "1234567890123456789012345";
const N_SCHEMA = '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}';
const script = (steps: object[]) => JSON.stringify({ script: steps });

let stack: LiveStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let shots: string;
let token: string;
let cspMessages: string[];

async function gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const response = await stack.t.gql<T>(query, variables, token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!;
}

// Each test gets its own browser context (no storage, no tabs left by another test), records its own
// Content-Security-Policy violations, and is signed in through the console's own form, so tests run in any order.
async function freshPage(options: { signIn: boolean }): Promise<void> {
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 860 } });
  cspMessages = [];
  await context.addInitScript({ content: `document.addEventListener("securitypolicyviolation", (event) => {
    const seen = JSON.parse(sessionStorage.getItem("csp-violations") ?? "[]");
    seen.push(event.violatedDirective + " " + event.blockedURI);
    sessionStorage.setItem("csp-violations", JSON.stringify(seen));
  });` });
  context.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspMessages.push(message.text());
  });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  if (!options.signIn) return;
  await page.goto(`${stack.t.api.url}/`);
  await signIn();
}

async function signIn(): Promise<void> {
  await page.getByRole("textbox", { name: "Token" }).fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "New chat" }).waitFor();
}

const cspViolations = async () => page.isClosed() ? "[]" : await page.evaluate<string>(`sessionStorage.getItem("csp-violations") ?? "[]"`);

test.before(async () => {
  stack = await startLiveStack(["alice"]);
  token = stack.users.alice!.token;
  shots = process.env.CHATD_CONSOLE_SCREENSHOTS ?? await mkdtemp(join(tmpdir(), "chatd-console-shots-"));
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});
test.before.each(async () => {
  await freshPage({ signIn: true });
});
// Every test's pages ran under the console's Content-Security-Policy without a violation (reported by the page
// itself and by Chromium's console).
test.after.each(async () => {
  try {
    assert.is(await cspViolations(), "[]");
    assert.equal(cspMessages, []);
  } finally {
    await context.close();
  }
});
test.after(async () => {
  await browser?.close();
  await stack.close();
  console.log(`console screenshots: ${shots}`);
});

const transcript = () => page.getByRole("log", { name: "Transcript" });
const chatCount = async () => (await gql<{ allChats: { totalCount: number } }>("{ allChats { totalCount } }", {})).allChats.totalCount;

async function newChat(message: string, options: { schema?: string; workspace?: string; clientTools?: string } = {}): Promise<void> {
  await page.getByRole("button", { name: "New chat" }).click();
  await page.getByRole("textbox", { name: "Message" }).fill(message);
  if (options.schema) await page.getByRole("textbox", { name: "JSON Schema" }).fill(options.schema);
  if (options.workspace) await page.getByRole("textbox", { name: "Workspace" }).fill(options.workspace);
  if (options.clientTools) await page.getByRole("textbox", { name: "Client tools" }).fill(options.clientTools);
  await page.getByRole("button", { name: "Send" }).click();
}

async function waitForText(locator: ReturnType<Page["locator"]>, text: string): Promise<void> {
  await locator.filter({ hasText: text }).waitFor();
}

const openChat = async (chatId: string) => {
  await page.goto(`${stack.t.api.url}/#/chat/${chatId}`);
  await transcript().waitFor();
};

test("sign in with a token", async () => {
  await context.close();
  await freshPage({ signIn: false });
  await page.goto(`${stack.t.api.url}/`);
  assert.is(await page.getByRole("button", { name: "New chat" }).count(), 0, "a new context starts signed out");
  await signIn();
});

test("(scripted provider) a structured chat: the workspace tool call streams, then the succeeded receipt card shows all 25 digits", async () => {
  await newChat(script([
    { reasoning: "List the workspace first.", text: "Listing the workspace.", tool_calls: [{ name: "list_files", args: { path: "." } }] },
    { tool_calls: [{ name: "coder_structured_output", args_raw: `{"output":{"n":${BIG}}}` }] },
  ]), { schema: N_SCHEMA, workspace: "ws" });
  const card = page.getByRole("article", { name: /^Receipt: succeeded/ });
  await card.waitFor();
  assert.ok((await card.textContent())!.includes(`"n": ${BIG}`), await card.textContent() ?? "");
  await page.getByText("Tool call list_files").click();
  assert.ok((await transcript().textContent())!.includes("a.txt"), "the tool's output is in the expanded call");
  await transcript().getByText("Listing the workspace.", { exact: true }).waitFor();
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "transcript-receipt.png"), fullPage: true });
});

test("(scripted provider) a JSON Schema the server refuses is shown at the field and nothing is sent", async () => {
  const before = await chatCount();
  await newChat("hello", { schema: '{"type":"object","$ref":"#/definitions/x"}' });
  const errors = page.locator("#schema-errors");
  await errors.getByText(/response_format\.json_schema\.schema/).waitFor();
  assert.is(await page.getByRole("textbox", { name: "JSON Schema" }).getAttribute("aria-invalid"), "true");
  assert.is(await chatCount(), before);
});

test("(scripted provider) a new chat declares a client tool in the composer; its request is answered from its form and the turn goes on", async () => {
  const tools = JSON.stringify([{ name: "ask_user", description: "ask the person", inputSchema: { type: "object", properties: { question: { type: "string" } } } }]);
  await newChat(script([{ text: "Asking you.", tool_calls: [{ name: "ask_user", args: { question: "colour?" } }] },
    { text: "Thanks for answering." }]), { clientTools: tools });
  // The first stream ends when the chat waits on the tool; the page then moves to the chat chatd created (and
  // shows the request again from the server), so the form is answered there.
  await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/);
  const chatId = new URL(page.url()).hash.replace("#/chat/", "");
  const request = page.getByRole("region", { name: "Tool request ask_user" });
  await request.getByText('{"question":"colour?"}').waitFor();
  await request.getByRole("textbox", { name: "Result" }).fill('{"colour": "green"}');
  await request.getByRole("button", { name: "Submit result" }).click();
  // exact: the user's message (the script) holds the same words.
  await transcript().getByText("Thanks for answering.", { exact: true }).waitFor();
  assert.is(await page.getByRole("region", { name: "Tool request ask_user" }).count(), 0);
  const { rows } = await stack.t.db.pool.query<{ result: unknown }>(
    `select c -> 'result' as result from chat_public.chat_messages m, jsonb_array_elements(m.content) c
      where m.chat_id = $1 and c ->> 'type' = 'tool-result'`, [chatId]);
  assert.equal(rows.map((r) => r.result), [{ colour: "green" }], "the form's JSON is the tool's result");
});

test("(scripted provider) client tools the console or chatd refuses are shown at the field and no chat is created", async () => {
  const before = await chatCount();
  await newChat("hello", { clientTools: '{"name": "ask_user"}' });
  const errors = page.locator("#client-tools-errors");
  await errors.getByText("dynamic_tools: must be a JSON array of {name, description, inputSchema}").waitFor();
  assert.is(await page.getByRole("textbox", { name: "Client tools" }).getAttribute("aria-invalid"), "true");
  await page.getByRole("textbox", { name: "Client tools" }).fill('[{"name": "bad name", "inputSchema": {"type": "object"}}]');
  await page.getByRole("button", { name: "Send" }).click();
  // The rules for each tool are chatd's: its refusals land at the field they name, and the message goes back into the
  // composer (no chat was created).
  await errors.getByText(/^dynamic_tools\[0\]\.name: .*must match \^\[A-Za-z0-9_-\]\{1,64\}\$/).waitFor();
  assert.is(await page.getByRole("textbox", { name: "Message" }).inputValue(), "hello");
  const many = JSON.stringify(Array.from({ length: 65 }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: "object" } })));
  await page.getByRole("textbox", { name: "Client tools" }).fill(many);
  await page.getByRole("button", { name: "Send" }).click();
  await errors.getByText(/^dynamic_tools: .*at most 64 tools/).waitFor();
  assert.is(await page.getByRole("textbox", { name: "Message" }).inputValue(), "hello");
  assert.is((await transcript().textContent())!.includes("hello"), false, "the refused message is not in the transcript");
  assert.is(await chatCount(), before);
});

test("(scripted provider) Stop interrupts a slow structured turn and the canceled card appears", async () => {
  await newChat(script([{ text: "This takes a while.", delay_ms: 60_000 }]), { schema: N_SCHEMA });
  await page.getByLabel("Chat status").getByText("running").waitFor();
  await page.getByRole("button", { name: "Stop" }).click();
  const card = page.getByRole("article", { name: /^Receipt: canceled/ });
  await card.waitFor();
  assert.match((await card.textContent())!, /canceled/);
});

test("(mock provider) a reload mid-turn shows every row once: none repeated, none missing", async () => {
  const release = barrier();
  const reached = barrier();
  stack.barriers.push(release);
  stack.server.enqueue({ text: ["First step. "], toolCalls: [{ id: "call_ls_1", name: "list_files", fragments: ['{"path":"."}'] }] });
  stack.server.enqueue({ text: ["Second ", "step ", "done."], hold: { afterEvents: 2, release: release.promise, reached: () => reached.resolve() } });
  const { createChat } = await gql<{ createChat: { result: { chatId: string } } }>(
    `mutation($c: JSON!) { createChat(input: {content: $c, modelConfigId: "mock", workspace: "ws"}) { result { chatId } } }`,
    { c: [{ type: "text", text: "two steps please" }] });
  // Opened once the first step is committed and the second is held, so the page and its reload both find the turn in
  // the same state (opening while the first step commits is the live-streaming tests' subject, not this one's).
  await reached.promise;
  await openChat(createChat.result.chatId);
  await transcript().getByText("First step.").waitFor();
  await page.reload();
  await transcript().getByText("First step.").waitFor();
  await page.getByLabel("Chat status").getByText("running").waitFor();
  release.resolve();
  await transcript().getByText("Second step done.").waitFor();
  await page.getByLabel("Chat status").getByText("waiting").waitFor();
  const text = (await transcript().textContent())!;
  assert.is(text.split("First step.").length - 1, 1, text);
  assert.is(text.split("Second step done.").length - 1, 1, text);
  assert.is(await page.getByText("Tool call list_files").count(), 1);
  await page.reload();
  await transcript().getByText("Second step done.").waitFor();
  assert.is((await transcript().textContent())!, text, "a reload after the turn shows the same transcript");
});

test("(scripted provider) the queue: messages sent while a turn runs wait in the queue; delete removes one, promote runs one now", async () => {
  await newChat(script([{ text: "Busy for a while.", delay_ms: 60_000 }]));
  await page.getByLabel("Chat status").getByText("running").waitFor();
  const queue = page.getByLabel("Queue");
  for (const text of ["first queued", "second queued"]) {
    await page.getByRole("textbox", { name: "Message" }).fill(text);
    await page.getByRole("button", { name: "Send" }).click();
    await queue.getByText(text).waitFor();
  }
  await queue.getByRole("listitem").filter({ hasText: "first queued" }).getByRole("button", { name: "Delete" }).click();
  await queue.getByText("first queued").waitFor({ state: "detached" });
  // Promote runs a queued message next: the running turn is interrupted and the message starts its own turn.
  await queue.getByRole("listitem").filter({ hasText: "second queued" }).getByRole("button", { name: "Promote" }).click();
  await transcript().getByText("second queued").waitFor();
  await page.getByLabel("Chat status").getByText("waiting").waitFor();
  // The queue is read again on the status change that shows "waiting"; the list goes once that read answers.
  await page.getByLabel("Queue").waitFor({ state: "detached" });
  assert.not.ok((await transcript().textContent())!.includes("first queued"));
});

test("(scripted provider) editing a user message starts the turn again from the edited text", async () => {
  await newChat("original question");
  await transcript().getByText("(scripted provider)").first().waitFor();
  await page.getByLabel("Chat status").getByText("waiting").waitFor();
  await transcript().getByRole("button", { name: "Edit" }).click();
  await page.getByRole("textbox", { name: "Edit message" }).fill("edited question");
  await page.getByRole("button", { name: "Save edit" }).click();
  await transcript().getByText("edited question").waitFor();
  await page.getByLabel("Chat status").getByText("waiting").waitFor();
  await waitForText(transcript(), "(scripted provider)");
  const text = (await transcript().textContent())!;
  assert.not.ok(text.includes("original question"), text);
  assert.is(text.split("(scripted provider)").length - 1, 1, "one answer: the discarded turn is gone");
});

test("(scripted provider) a failed receipt shows its code", async () => {
  await newChat(script([{ text: "No JSON from me." }]), { schema: N_SCHEMA });
  const card = page.getByRole("article", { name: /^Receipt: failed/ });
  await card.waitFor();
  assert.match((await card.textContent())!, /[a-z_]+: /);
});

test("(scripted provider) the batch page: a progress bar that fills, and the results as a JSONL download", async () => {
  const envelope = JSON.stringify({ type: "json_schema", json_schema: { name: "answer", schema: JSON.parse(N_SCHEMA) } });
  const items = [1, 2, 3].map((line) => ({ line, content: [{ type: "text", text: `question ${line}` }] }));
  const { createBatch } = await gql<{ createBatch: { result: { rowId: string } } }>(
    `mutation($rf: String!, $items: JSON!) { createBatch(input: {name: "demo-batch", responseFormat: $rf, items: $items, concurrency: 2}) { result { rowId } } }`,
    { rf: envelope, items });
  assert.ok(createBatch.result.rowId);
  await page.goto(`${stack.t.api.url}/#/batches`);
  const batch = page.getByRole("region", { name: "Batch demo-batch" });
  await batch.getByText("3 of 3 finished").waitFor();
  assert.is(await batch.getByRole("progressbar", { name: "Progress" }).getAttribute("value"), "3");
  const [download] = await Promise.all([page.waitForEvent("download"), batch.getByRole("button", { name: "Download results" }).click()]);
  const lines = (await readFile(await download.path(), "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { line: number; status: string });
  assert.equal(lines.map((l) => l.line), [1, 2, 3]);
  assert.ok(lines.every((l) => l.status === "succeeded"), JSON.stringify(lines));
  await page.screenshot({ path: join(shots, "batch-page.png"), fullPage: true });
});

test("the console runs under its Content-Security-Policy and a signed-in page reports no violation", async () => {
  const response = await page.goto(`${stack.t.api.url}/`);
  assert.match((await response!.allHeaders())["content-security-policy"] ?? "", /script-src 'self'/);
  await page.getByRole("button", { name: "New chat" }).waitFor();
  assert.is(await cspViolations(), "[]");
  assert.equal(cspMessages, []);
});

test.run();
