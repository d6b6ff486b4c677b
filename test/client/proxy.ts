// A TCP proxy in front of the API, so a test can drop the client's real sockets (HTTP and websocket) and refuse new
// ones for a while: a network failure the client must ride out, without touching the server.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface Proxy {
  /** `http://127.0.0.1:<port>` + the target's path. */
  url: string;
  /** Destroys every open connection and refuses new ones until `resume`. */
  cut(): void;
  resume(): void;
  /** Connections accepted so far (a reconnect shows up here). */
  accepted(): number;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const url = new URL(target);
  const open = new Set<Socket>();
  let refusing = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    accepted += 1;
    const upstream = connect(Number(url.port), url.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}${url.pathname}`,
    cut() {
      refusing = true;
      for (const socket of open) socket.destroy();
    },
    resume() { refusing = false; },
    accepted: () => accepted,
    close: () => new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
