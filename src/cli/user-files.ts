// Files named on the command line. npm runs scripts in the package root, so `npm run chatd -- batch submit --input
// prompts.jsonl` would look for prompts.jsonl there; npm passes the caller's folder as INIT_CWD, and relative paths
// resolve against it (against the working folder when chatd runs without npm). A file that cannot be opened is one
// clear line (UserFileError, printed by main.ts), not a stack trace.
import { open, type FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";

export class UserFileError extends Error {}

/** The caller's folder: INIT_CWD under npm, else the working folder. */
export function callerFolder(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  return env.INIT_CWD != null && env.INIT_CWD !== "" ? env.INIT_CWD : cwd;
}

export function userPath(path: string): string {
  return resolve(callerFolder(), path);
}

const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a folder",
  ENOTDIR: "a part of the path is not a folder",
};

function failure(action: string, path: string, error: unknown): UserFileError {
  const code = (error as { code?: string }).code ?? "";
  return new UserFileError(`cannot ${action} ${path}: ${REASONS[code] ?? (error as Error).message}`);
}

async function openFor(path: string, flags: "r" | "w"): Promise<FileHandle> {
  const action = flags === "r" ? "read" : "write";
  let handle: FileHandle;
  try {
    handle = await open(userPath(path), flags);
  } catch (error) {
    throw failure(action, path, error);
  }
  // Opening a folder for reading succeeds on Linux; reading it would fail later, as a stream error.
  if (flags === "r" && (await handle.stat()).isDirectory()) {
    await handle.close();
    throw failure(action, path, { code: "EISDIR" });
  }
  return handle;
}

export async function readUserFile(path: string): Promise<Buffer> {
  const handle = await openFor(path, "r");
  try {
    return await handle.readFile();
  } catch (error) {
    throw failure("read", path, error);
  } finally {
    await handle.close();
  }
}

/** A stream of the file (closed when read to its end). */
export async function userFileStream(path: string): Promise<Readable> {
  return (await openFor(path, "r")).createReadStream();
}

export async function userOutputStream(path: string): Promise<Writable> {
  return (await openFor(path, "w")).createWriteStream();
}
