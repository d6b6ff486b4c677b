// A tiny MCP server for tests, built on the official SDK's server side (low-level Server, so no schema library is
// needed). Run as a program it speaks stdio; startHttpMcpServer serves streamable HTTP on 127.0.0.1 (stateless: a
// server and transport per request). Tools: echo, fail (an isError result), big (a large text), hang (never
// answers), die (the server goes away mid-call: the stdio process exits, the HTTP connection is destroyed), pid (the
// serving process, so a test can tell a reused stdio server from a new one), stall (every later request, listing
// included, goes unanswered while the process lives on), and two whose names no provider accepts once namespaced
// (skipped by the client).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export const MCP_SERVER_PATH = fileURLToPath(import.meta.url);

const object = { type: "object" as const };

export function makeMcpServer(die: () => void): Server {
  const server = new Server({ name: "chatd-test-mcp", version: "1.0.0" }, { capabilities: { tools: {} } });
  let stalled = false;
  const never = () => new Promise<never>(() => undefined);
  server.setRequestHandler(ListToolsRequestSchema, () => stalled ? never() : {
    tools: [
      { name: "echo", description: "Echoes text.", inputSchema: { ...object, properties: { text: { type: "string" } }, required: ["text"] } },
      { name: "fail", description: "Answers with a tool error.", inputSchema: object },
      { name: "big", description: "Returns 200,000 characters.", inputSchema: object },
      { name: "hang", description: "Never answers.", inputSchema: object },
      { name: "die", description: "The server goes away mid-call.", inputSchema: object },
      { name: "pid", description: "The server's process id.", inputSchema: object },
      { name: "stall", description: "The server stops answering.", inputSchema: object },
      { name: "bad.name", description: "A dot is not allowed in provider tool names.", inputSchema: object },
      { name: "x".repeat(60), description: "Too long once namespaced.", inputSchema: object },
    ],
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (stalled) return never();
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "echo": return { content: [{ type: "text", text: `echo: ${String(args.text)}` }] };
      case "fail": return { content: [{ type: "text", text: "the lookup failed" }], isError: true };
      case "big": return { content: [{ type: "text", text: "b".repeat(200_000) }] };
      case "hang": return never();
      case "die":
        die();
        return never();
      case "pid": return { content: [{ type: "text", text: String(process.pid) }] };
      case "stall":
        stalled = true;
        return { content: [{ type: "text", text: "stalled" }] };
      default: return { content: [{ type: "text", text: "no such tool" }], isError: true };
    }
  });
  return server;
}

export async function startHttpMcpServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer((req, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const server = makeMcpServer(() => req.socket.destroy());
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}

if (process.argv[1] === MCP_SERVER_PATH) {
  await makeMcpServer(() => process.exit(3)).connect(new StdioServerTransport());
}
