// Parked MCP connections: when a run ends, its connections wait here for the same chat's next run in this process,
// so a stdio server (often `npx ...`, seconds to start) is not started again on every turn. A connection is never
// shared between chats (a server process may hold per-session state) and serves one run at a time: `take` removes
// it from the cache. Parked connections are bounded in time and number, and closed when the worker stops.
import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpServerConfig } from "./config.ts";

/** How long a parked connection waits for its chat's next run. */
export const PARKED_TTL_MS = 60_000;
/** Parked connections per process: each may be a server process of its own. */
export const MAX_PARKED = 16;

/** Any change of a server's config (command, args, timeout, secrets...) gives a new key, so the old connection is
 * never reused and simply expires. Hashed so that no secret is part of the key. */
export function parkingKey(chatId: string, server: McpServerConfig): string {
  const config = createHash("sha256").update(JSON.stringify(server)).digest("hex");
  return `${chatId}\n${server.id}\n${config}`;
}

export class McpConnectionCache {
  private readonly ttlMs: number;
  private readonly maxParked: number;
  /** In parking order: the first entry is the least recently parked. */
  private readonly parked = new Map<string, { client: Client; expiry: NodeJS.Timeout }>();

  constructor(ttlMs = PARKED_TTL_MS, maxParked = MAX_PARKED) {
    this.ttlMs = ttlMs;
    this.maxParked = maxParked;
  }

  get size(): number {
    return this.parked.size;
  }

  /** The connection parked under `key`, now the caller's alone: it parks or closes it when done. */
  take(key: string): Client | undefined {
    const entry = this.parked.get(key);
    if (entry == null) return undefined;
    this.parked.delete(key);
    clearTimeout(entry.expiry);
    entry.client.onclose = undefined;
    return entry.client;
  }

  park(key: string, client: Client): void {
    // The SDK drops the transport once it has closed (a server that exited mid-run): nothing left to keep.
    if (client.transport == null) return;
    // Two runs of one chat overlap only when one lost its lease; the one parked last is kept.
    void this.evict(key);
    for (const oldest of this.parked.keys()) {
      if (this.parked.size < this.maxParked) break;
      void this.evict(oldest);
    }
    const expiry = setTimeout(() => void this.evict(key), this.ttlMs).unref();
    // A server that exits while parked leaves the cache at once instead of failing the next run's listing.
    client.onclose = () => void this.evict(key);
    this.parked.set(key, { client, expiry });
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.parked.keys()].map((key) => this.evict(key)));
  }

  private async evict(key: string): Promise<void> {
    await this.take(key)?.close().catch(() => undefined);
  }
}
