// The reconnect contract of `chatEvents` against the real server: every message after the cursor exactly once, in
// numeric id order, then live. Message ids are global, so a chat's ids cross 9→10, 99→100, 999→1000 in ordinary
// use; the sequence is moved here to put each boundary inside one chat. The concurrent test commits to the chat
// (steps and queue-deletion receipts) while other chats commit too and subscribers reconnect mid-stream.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquire, assistantText, commitStep, deleteQueued, finishTurn, sendMessage, structured, type Fence } from "../support/chats.ts";
import { startTestApi, subscribe, textContent, type EventQueue, type GraphQLResponse, type TestApi } from "../api/harness.ts";

const EVENTS = `subscription($chatId: UUID!, $after: BigInt) { chatEvents(chatId: $chatId, afterMessageId: $after) {
  type status message { rowId } } }`;

interface Event { type: string; status: string | null; message: { rowId: string } | null }
type Queue = EventQueue<GraphQLResponse<{ chatEvents: Event }>>;

let t: TestApi;
let alice: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  await t.db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
});
test.after(async () => { await t.close(); });

async function createChat(): Promise<{ chatId: string; messageId: string }> {
  const response = await t.gql<{ createChat: { result: { chatId: string; messageId: string } } }>(
    `mutation($c: JSON!) { createChat(input: {content: $c}) { result { chatId messageId } } }`, { c: textContent("start") }, alice.token);
  assert.not.ok(response.errors, JSON.stringify(response.errors));
  return response.data!.createChat.result;
}

/** The next message id in the global sequence becomes `next` (only ever moved forward). */
async function moveSequenceTo(next: number): Promise<void> {
  const { rows } = await t.db.pool.query<{ max: string | null }>("select max(id)::text as max from chat_public.chat_messages");
  assert.ok(Number(rows[0]!.max ?? 0) < next, "the sequence only moves forward");
  await t.db.pool.query("select setval(pg_get_serial_sequence('chat_public.chat_messages', 'id'), $1, false)", [next]);
}

/** What the subscriber may see, in id order (model-only rows are hidden from it). `order by m.id`: the bigint, not
 * the text output column of the same name. */
async function visibleIds(chatId: string, after: string): Promise<string[]> {
  const { rows } = await t.db.pool.query<{ id: string }>(
    `select m.id::text from chat_public.chat_messages m where m.chat_id = $1 and m.id > $2 and m.visibility <> 'model'
     order by m.id`, [chatId, after]);
  return rows.map((row) => row.id);
}

/** Message ids delivered until the chat reports `status` (the end marker every test commits last). */
async function messagesUntilStatus(queue: Queue, status: string, taken: string[] = []): Promise<string[]> {
  for (;;) {
    const response = await queue.next();
    assert.not.ok(response.errors, JSON.stringify(response.errors));
    const event = response.data!.chatEvents;
    if (event.type === "message") taken.push(event.message!.rowId);
    if (event.type === "status" && event.status === status) return taken;
  }
}

/** Barrier: the subscription has read the chat (its first event is the status it found, before any message). */
async function started(queue: Queue): Promise<Queue> {
  const response = await queue.next();
  assert.is(response.data?.chatEvents.type, "status", JSON.stringify(response));
  assert.is(response.data!.chatEvents.status, "RUNNING");
  return queue;
}

async function messagesCount(queue: Queue, count: number, taken: string[] = []): Promise<string[]> {
  while (taken.length < count) {
    const response = await queue.next();
    assert.not.ok(response.errors, JSON.stringify(response.errors));
    const event = response.data!.chatEvents;
    if (event.type === "message") taken.push(event.message!.rowId);
  }
  return taken;
}

for (const boundary of [10, 100, 1000]) {
  test(`replay after a cursor below ${boundary}, then live: each message once, in numeric order`, async () => {
    const chat = await createChat();
    await moveSequenceTo(boundary - 4);
    let fence = await acquire(t.db, chat.chatId);
    for (let i = 0; i < 6; i++) fence = await commitStep(t.db, fence, [assistantText(`before ${i}`)], { steps: 1 });
    const cursor = String(boundary - 2);
    const expectedReplay = await visibleIds(chat.chatId, cursor);
    assert.equal(expectedReplay, [boundary - 1, boundary, boundary + 1].map(String), "the cursor sits right below the boundary");

    const events = await started(subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId, after: cursor }));
    const replay = await messagesCount(events, expectedReplay.length);
    assert.equal(replay, expectedReplay, "replay in numeric order");
    for (let i = 0; i < 3; i++) fence = await commitStep(t.db, fence, [assistantText(`live ${i}`)], { steps: 1 });
    await finishTurn(t.db, fence);
    const all = await messagesUntilStatus(events, "WAITING", replay);
    assert.equal(all, await visibleIds(chat.chatId, cursor), "then live, nothing repeated or skipped");
    events.dispose();

    const fromStart = subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId });
    const full = await visibleIds(chat.chatId, "0");
    assert.equal(await messagesCount(fromStart, full.length), full, "a full replay is in numeric order");
    fromStart.dispose();
  });
}

test("concurrent commits (steps, receipts, other chats) and reconnects mid-stream: each message once, in order", async () => {
  await moveSequenceTo(9_990);
  const chat = await createChat();
  const other = await createChat();
  let fence = await acquire(t.db, chat.chatId);
  let otherFence = await acquire(t.db, other.chatId);
  const queued: string[] = [];
  for (let i = 0; i < 6; i++) {
    queued.push((await sendMessage(t.db, alice.id, chat.chatId, `queued ${i}`, structured())).queued_message_id!);
  }
  const first = await started(subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId }));
  const seenBefore = await messagesCount(first, 1);

  const steps = async (start: Fence, count: number, label: string): Promise<Fence> => {
    let current = start;
    for (let i = 0; i < count; i++) current = await commitStep(t.db, current, [assistantText(`${label} ${i}`)], { steps: 1 });
    return current;
  };
  const receipts = async () => { for (const id of queued) await deleteQueued(t.db, alice.id, id); };
  // The first subscriber leaves after a few messages and reconnects from the last id it received; half of the chat's
  // steps wait for that, so the reconnect happens mid-stream. Both subscribers start while the chat runs, so the
  // WAITING status after finishTurn ends what they receive.
  const reconnecting = (async () => {
    const taken = await messagesCount(first, 4, seenBefore);
    first.dispose();
    const again = await started(subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS,
      { chatId: chat.chatId, after: taken[taken.length - 1] }));
    return { taken, again };
  })();
  const mine = async () => {
    const half = await steps(fence, 10, "mine");
    await reconnecting;
    return steps(half, 10, "mine");
  };
  [fence, otherFence] = await Promise.all([mine(), steps(otherFence, 20, "other"), receipts()]);
  const late = await started(subscribe<{ chatEvents: Event }>(t.ws(alice.token), EVENTS, { chatId: chat.chatId, after: seenBefore[0] }));
  await finishTurn(t.db, fence);
  await finishTurn(t.db, otherFence);

  const expected = await visibleIds(chat.chatId, "0");
  assert.ok(expected.some((id) => Number(id) < 10_000) && expected.some((id) => Number(id) >= 10_000), "ids cross 9999→10000");
  const { taken, again } = await reconnecting;
  assert.equal(await messagesUntilStatus(again, "WAITING", [...taken]), expected, "reconnected subscriber");
  assert.equal(await messagesUntilStatus(late, "WAITING", [seenBefore[0]!]), expected, "late subscriber");
  again.dispose();
  late.dispose();
});

test.run();
