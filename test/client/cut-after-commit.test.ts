// A send whose answer is lost after chatd committed it (the outcome is unknown to the client): a TCP proxy between
// @chatd/client and a real API server forwards the first request and drops chatd's answer, cutting the connection
// after the commit. The client sends it again with the same idempotency key, and chatd returns the first result:
// one chat, one message. Without a key the same cut makes a second request (the
// contrast shows that the cut lands after the commit).
import { createServer, connect, type Server, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createChatdClient } from "../../client/src/index.ts";
import { startTestApi, type TestApi } from "../api/harness.ts";

let api: TestApi;

test.before(async () => {
  api = await startTestApi();
});
test.after(async () => {
  await api.close();
});

/** Forwards to the API; the first `cut` connections lose chatd's answer (both sides are closed when it arrives). */
async function cuttingProxy(target: URL, cut: number): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    connections += 1;
    const cutThis = connections <= cut;
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    }
    downstream.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      if (cutThis) {
        upstream.destroy();
        downstream.destroy();
        return;
      }
      downstream.write(chunk);
    });
    upstream.on("end", () => downstream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target.href);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.href,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const counts = async (userId: string) => (await api.db.pool.query<{ chats: number; messages: number }>(
  `select (select count(*)::int from chat_public.chats where owner_id = $1) as chats,
          (select count(*)::int from chat_public.chat_messages m join chat_public.chats c on c.id = m.chat_id
           where c.owner_id = $1 and m.role = 'user') as messages`, [userId])).rows[0]!;

test("a create whose answer is cut after the commit is retried with the same key: one chat, one message", async () => {
  const user = await api.user("cut-keyed");
  const proxy = await cuttingProxy(new URL(api.api.graphqlUrl), 1);
  const client = createChatdClient({ url: proxy.url, token: user.token });
  try {
    const created = await client.chats.create({ prompt: "hello once" });
    assert.is(proxy.connections(), 2, "the first answer was cut and the write was sent again");
    assert.equal(await counts(user.id), { chats: 1, messages: 1 }, "one chat, one message");
    const { rows } = await api.db.pool.query<{ id: string }>("select id from chat_public.chats where owner_id = $1", [user.id]);
    assert.is(created.chatId, rows[0]!.id, "the retry answered with the chat the first attempt created");
  } finally {
    await client.close();
    await proxy.close();
  }
});

test("contrast: the same cut with a retry that carries no key makes a second chat", async () => {
  const user = await api.user("cut-unkeyed");
  const proxy = await cuttingProxy(new URL(api.api.graphqlUrl), 1);
  const send = () => fetch(proxy.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${user.token}` },
    body: JSON.stringify({ query: `mutation($c: JSON!) { createChat(input: {content: $c}) { result { chatId } } }`,
      variables: { c: [{ type: "text", text: "hello twice" }] } }),
  });
  try {
    await send().then(() => assert.unreachable("the first answer is cut"), () => undefined);
    assert.is((await send()).status, 200);
    assert.equal(await counts(user.id), { chats: 2, messages: 2 }, "the cut landed after the commit");
  } finally {
    await proxy.close();
  }
});

test.run();
