// Workspace tools: read-only views of the chat's workspace folder. Every path goes through
// resolveInWorkspace; directory walks never follow symbolic links, so a link cannot lead a walk outside.
//
// Metadata (stat, directory listings) is read synchronously and file contents asynchronously: a stat is a bounded
// syscall of microseconds on the local disk the workspaces live on, while each trip through libuv's thread pool
// costs several times that in CPU (thread hand-offs, a wake-up of the event loop). Reads of file contents stay
// asynchronous: they are large and unbounded in time.
import { readdirSync, statSync, type Dirent } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { JSONObject, JSONValue } from "../providers/index.ts";
import { displayPath, resolveInWorkspace } from "./paths.ts";
import { ToolError, type ToolContext, type ToolDefinition, type ToolOutput } from "./types.ts";

const LIST_CAP_ENTRIES = 1000;
const SEARCH_CAP_FILES = 2000;
const SEARCH_CAP_MATCHES = 100;
const SEARCH_FILE_MAX_BYTES = 1024 * 1024;
const MAX_DEPTH = 8;

const ok = (result: JSONValue): ToolOutput => ({ result, isError: false });

function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError("the tool was cancelled");
}

async function readFileTool(args: JSONObject, ctx: ToolContext): Promise<ToolOutput> {
  const path = await resolveInWorkspace(ctx.workspaceRoot, args.path);
  const info = statSync(path);
  if (!info.isFile()) throw new ToolError(`${displayPath(ctx.workspaceRoot, path)} is not a file`);
  const handle = await open(path, "r");
  try {
    // At most the result cap of the file, and one byte past it to know whether the file was cut.
    const cap = ctx.resultCapBytes;
    const buffer = Buffer.alloc(Math.min(info.size, cap) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, Math.min(bytesRead, cap));
    if (bytes.includes(0)) throw new ToolError(`${displayPath(ctx.workspaceRoot, path)} looks like a binary file`);
    // A cut may split a UTF-8 sequence; the decoder replaces the broken tail instead of failing.
    const text = bytes.toString("utf8");
    if (bytesRead <= cap && info.size <= cap) return ok(text);
    return { result: `${text}\n[truncated: showing the first ${cap} of ${Math.max(info.size, bytesRead)} bytes]`, isError: false, capped: true };
  } finally {
    await handle.close();
  }
}

interface Entry {
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  size?: number;
}

function entryType(d: Dirent): Entry["type"] {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "dir";
  if (d.isFile()) return "file";
  return "other";
}

/** Breadth-first walk without following links; stops at `limit` entries. */
async function walk(root: string, start: string, recursive: boolean, limit: number, signal: AbortSignal,
  visit: (entry: Entry, absolute: string) => Promise<boolean>): Promise<boolean> {
  let frontier: { dir: string; depth: number }[] = [{ dir: start, depth: 0 }];
  let seen = 0;
  while (frontier.length > 0) {
    const next: typeof frontier = [];
    for (const { dir, depth } of frontier) {
      checkAborted(signal);
      const children = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
      for (const child of children) {
        const absolute = join(dir, child.name);
        const entry: Entry = { path: displayPath(root, absolute), type: entryType(child) };
        if (seen++ >= limit) return true;
        if (!(await visit(entry, absolute))) return true;
        if (recursive && entry.type === "dir" && depth + 1 < MAX_DEPTH) next.push({ dir: absolute, depth: depth + 1 });
      }
    }
    frontier = next;
  }
  return false;
}

async function listFilesTool(args: JSONObject, ctx: ToolContext): Promise<ToolOutput> {
  const start = await resolveInWorkspace(ctx.workspaceRoot, args.path);
  if (!statSync(start).isDirectory()) throw new ToolError(`${displayPath(ctx.workspaceRoot, start)} is not a directory`);
  const entries: JSONObject[] = [];
  const truncated = await walk(ctx.workspaceRoot, start, args.recursive === true, LIST_CAP_ENTRIES, ctx.signal,
    async (entry, absolute) => {
      const item: JSONObject = { path: entry.path, type: entry.type };
      if (entry.type === "file") item.size = statSync(absolute).size;
      entries.push(item);
      return true;
    });
  return ok(truncated ? { entries, truncated: `only the first ${LIST_CAP_ENTRIES} entries are listed` } : { entries });
}

async function searchFilesTool(args: JSONObject, ctx: ToolContext): Promise<ToolOutput> {
  const query = args.query;
  if (typeof query !== "string" || query.length === 0 || query.length > 200) {
    throw new ToolError("query must be a non-empty string of at most 200 characters");
  }
  const needle = query.toLowerCase();
  const start = await resolveInWorkspace(ctx.workspaceRoot, args.path);
  const matches: JSONObject[] = [];
  let skipped = 0;
  const scan = async (entry: Entry, absolute: string): Promise<boolean> => {
    if (entry.type !== "file") return true;
    const info = statSync(absolute);
    if (info.size > SEARCH_FILE_MAX_BYTES) {
      skipped += 1;
      return true;
    }
    const handle = await open(absolute, "r");
    let text: string;
    try {
      const bytes = await handle.readFile();
      if (bytes.includes(0)) return true;
      text = bytes.toString("utf8");
    } finally {
      await handle.close();
    }
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!line.toLowerCase().includes(needle)) continue;
      matches.push({ path: entry.path, line: i + 1, text: line.length > 200 ? `${line.slice(0, 200)}…` : line });
      if (matches.length >= SEARCH_CAP_MATCHES) return false;
    }
    return true;
  };
  let truncated: boolean;
  if (statSync(start).isFile()) {
    truncated = !(await scan({ path: displayPath(ctx.workspaceRoot, start), type: "file" }, start));
  } else {
    truncated = await walk(ctx.workspaceRoot, start, true, SEARCH_CAP_FILES, ctx.signal, scan);
  }
  const result: JSONObject = { matches };
  if (truncated) result.truncated = `stopped after ${SEARCH_CAP_MATCHES} matches or ${SEARCH_CAP_FILES} entries`;
  if (skipped > 0) result.skipped_large_files = skipped;
  return ok(result);
}

export const workspaceTools: ToolDefinition[] = [
  {
    name: "list_files",
    kind: "workspace",
    rerunnable: true,
    description: "List the files and folders of the workspace (or of a folder in it). Paths are relative to the workspace.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Folder relative to the workspace; '.' for its root." },
        recursive: { type: "boolean", description: "Also list sub-folders (bounded depth and count)." },
      },
      required: ["path"],
      additionalProperties: false,
    },
    execute: listFilesTool,
  },
  {
    name: "read_file",
    kind: "workspace",
    rerunnable: true,
    description: "Read a text file of the workspace (about the first 64 KiB).",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", description: "File path relative to the workspace." } },
      required: ["path"],
      additionalProperties: false,
    },
    execute: readFileTool,
  },
  {
    name: "search_files",
    kind: "workspace",
    rerunnable: true,
    description: "Find lines containing a text (case-insensitive) in the workspace's files.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "Text to look for." },
        path: { type: "string", description: "Folder or file to search in, relative to the workspace; default '.'." },
      },
      required: ["query"],
      additionalProperties: false,
    },
    execute: searchFilesTool,
  },
];
