// The HTTP entry point. The GraphQL API (PostGraphile) lands with its own issue; until then the server answers
// health checks and says plainly that GraphQL is not served yet.
import { createServer, type Server } from "node:http";
import type pg from "pg";

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

export async function startApi(options: { pool: pg.Pool; port: number; host: string }): Promise<ApiServer> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/health") {
      options.pool.query("select 1").then(
        () => { res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'); },
        () => { res.writeHead(503, { "content-type": "application/json" }).end('{"ok":false,"reason":"database unavailable"}'); },
      );
      return;
    }
    res.writeHead(501, { "content-type": "application/json" })
      .end(JSON.stringify({ errors: [{ message: "the GraphQL API is not part of this build yet; use SQL (see README)" }] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return {
    url: `http://${options.host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
