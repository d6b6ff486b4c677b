// A webhook receiver on 127.0.0.1 (port 0) for the tests: it records each request's headers and raw body and
// answers with the next scripted answer (200 once the script is used up). `next()` waits for the next request.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers for the coming requests, in order: a status, or a status with headers. */
  answers: { status: number; headers?: Record<string, string> }[];
  next(timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: ((value: Received) => void)[] = [];
  const answers: Receiver["answers"] = [];
  let taken = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(entry);
      const answer = answers.shift() ?? { status: 200 };
      res.writeHead(answer.status, answer.headers ?? {}).end("ok");
      waiters.shift()?.(entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answers,
    next(timeoutMs = 20_000) {
      const ready = received[taken];
      if (ready) {
        taken += 1;
        return Promise.resolve(ready);
      }
      return new Promise<Received>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((value) => {
          clearTimeout(timer);
          taken += 1;
          resolve(value);
        });
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
