// Workspace write tools (only where the deployment enables them, never in plan mode). Confinement
// matches the read tools: a model path is relative to the workspace, and what it resolves to must stay under the
// workspace's real path. Writing adds one rule: the path is walked component by component without trusting
// links, missing folders are created one at a time (so a created folder is never a link), a link on the way is
// followed only when its target stays inside, and the final open uses O_NOFOLLOW so a link swapped in at the
// last moment is refused rather than followed.
import { constants } from "node:fs";
import { lstat, mkdir, open, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { JSONObject } from "../providers/index.ts";
import { displayPath, resolveInWorkspace } from "./paths.ts";
import { ToolError, type ToolContext, type ToolDefinition, type ToolOutput } from "./types.ts";

/** Largest file a write or an edit produces (and the largest file an edit reads). */
export const WRITE_CAP_BYTES = 1024 * 1024;

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function lstatOrNull(path: string): Promise<Awaited<ReturnType<typeof lstat>> | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return null;
    throw error;
  }
}

/** A link's real target, refused unless it exists and stays inside the workspace. */
async function followInside(root: string, link: string, shown: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(link);
  } catch {
    throw new ToolError(`${shown} is a symbolic link to nothing`);
  }
  if (!inside(root, real)) throw new ToolError("path escapes the workspace (through a symbolic link)");
  return real;
}

/** Where a write of `requested` lands: a real path under `root` whose parent folders exist. */
export async function resolveForWrite(root: string, requested: unknown): Promise<{ path: string; exists: boolean }> {
  if (typeof requested !== "string" || requested === "") throw new ToolError("path must be a non-empty string");
  if (requested.includes("\0")) throw new ToolError("path must not contain NUL characters");
  if (isAbsolute(requested)) throw new ToolError("path must be relative to the workspace (absolute paths are refused)");
  const lexical = resolve(root, requested);
  if (!inside(root, lexical)) throw new ToolError("path escapes the workspace");
  const parts = relative(root, lexical).split(sep).filter((p) => p !== "");
  const name = parts.pop();
  if (name == null) throw new ToolError("path names the workspace itself, not a file");
  let dir = root;
  for (const part of parts) {
    const next = join(dir, part);
    const info = await lstatOrNull(next);
    if (info == null) {
      await mkdir(next);
      dir = next;
    } else if (info.isSymbolicLink()) {
      dir = await followInside(root, next, displayPath(root, next));
      if (!(await stat(dir)).isDirectory()) throw new ToolError(`${displayPath(root, next)} is not a directory`);
    } else if (info.isDirectory()) {
      dir = next;
    } else {
      throw new ToolError(`${displayPath(root, next)} is not a directory`);
    }
  }
  const target = join(dir, name);
  const info = await lstatOrNull(target);
  if (info == null) return { path: target, exists: false };
  const real = info.isSymbolicLink() ? await followInside(root, target, displayPath(root, target)) : target;
  if (!(await stat(real)).isFile()) throw new ToolError(`${displayPath(root, real)} is not a regular file`);
  return { path: real, exists: true };
}

async function writeAll(path: string, bytes: Buffer): Promise<void> {
  let handle;
  try {
    handle = await open(path, WRITE_FLAGS, 0o644);
  } catch (error) {
    // O_NOFOLLOW: the path became a link after it was checked.
    if ((error as { code?: unknown }).code === "ELOOP") throw new ToolError("refusing to write through a symbolic link");
    throw error;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}

function textArg(args: JSONObject, key: string, allowEmpty: boolean): string {
  const value = args[key];
  if (typeof value !== "string" || (!allowEmpty && value === "")) {
    throw new ToolError(`${key} must be a${allowEmpty ? "" : " non-empty"} string`);
  }
  return value;
}

function checkSize(bytes: Buffer): void {
  if (bytes.length > WRITE_CAP_BYTES) {
    throw new ToolError(`the file would have ${bytes.length} bytes; the limit is ${WRITE_CAP_BYTES}`);
  }
}

async function writeFileTool(args: JSONObject, ctx: ToolContext): Promise<ToolOutput> {
  const content = textArg(args, "content", true);
  const bytes = Buffer.from(content, "utf8");
  checkSize(bytes);
  const target = await resolveForWrite(ctx.workspaceRoot, args.path);
  if (ctx.signal.aborted) throw new ToolError("the tool was cancelled");
  await writeAll(target.path, bytes);
  return { result: { path: displayPath(ctx.workspaceRoot, target.path), bytes: bytes.length, created: !target.exists }, isError: false };
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

async function editFileTool(args: JSONObject, ctx: ToolContext): Promise<ToolOutput> {
  const oldText = textArg(args, "old_text", false);
  const newText = textArg(args, "new_text", true);
  const replaceAll = args.replace_all === true;
  // An edit needs an existing file; the read resolver refuses escapes and follows only inside links.
  const path = await resolveInWorkspace(ctx.workspaceRoot, args.path);
  const shown = displayPath(ctx.workspaceRoot, path);
  const info = await stat(path);
  if (!info.isFile()) throw new ToolError(`${shown} is not a file`);
  if (info.size > WRITE_CAP_BYTES) throw new ToolError(`${shown} has more than ${WRITE_CAP_BYTES} bytes; edit refused`);
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  let original: Buffer;
  try {
    original = await handle.readFile();
  } finally {
    await handle.close();
  }
  if (original.includes(0)) throw new ToolError(`${shown} looks like a binary file`);
  const text = original.toString("utf8");
  const count = occurrences(text, oldText);
  if (count === 0) throw new ToolError(`old_text was not found in ${shown}`);
  if (count > 1 && !replaceAll) {
    throw new ToolError(`old_text occurs ${count} times in ${shown}; include more context or set replace_all`);
  }
  const updated = replaceAll ? text.split(oldText).join(newText) : text.replace(oldText, () => newText);
  const bytes = Buffer.from(updated, "utf8");
  checkSize(bytes);
  if (ctx.signal.aborted) throw new ToolError("the tool was cancelled");
  await writeAll(path, bytes);
  return { result: { path: shown, replacements: replaceAll ? count : 1 }, isError: false };
}

export const writeTools: ToolDefinition[] = [
  {
    name: "write_file",
    kind: "workspace",
    description: "Create or overwrite a text file in the workspace (missing folders are created; at most 1 MiB).",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path relative to the workspace." },
        content: { type: "string", description: "The complete new content of the file." },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    execute: writeFileTool,
  },
  {
    name: "edit_file",
    kind: "workspace",
    description: "Replace an exact piece of text in a workspace file. old_text must occur exactly once unless replace_all is true.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path relative to the workspace." },
        old_text: { type: "string", description: "The exact text to replace (include enough context to be unique)." },
        new_text: { type: "string", description: "The replacement text." },
        replace_all: { type: "boolean", description: "Replace every occurrence instead of exactly one." },
      },
      required: ["path", "old_text", "new_text"],
      additionalProperties: false,
    },
    execute: editFileTool,
  },
];
