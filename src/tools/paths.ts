// Workspace confinement. A path from the model is relative to the workspace root; the resolved real path
// (symlinks followed) must stay under the root's real path, so `..`, absolute paths and symlinks pointing
// outside are all refused the same way.
//
// Resolution is synchronous (realpath(3) on this thread): it is a bounded lookup of one path, microseconds on the
// local disk the workspaces live on, while a round trip through libuv's thread pool costs several times that in CPU
// (two thread hand-offs and a wake-up of the event loop) on every tool call. Nothing is cached: the root and the
// path are resolved afresh on each call, so a symbolic link swapped in between calls is seen.
import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { ToolError } from "./types.ts";

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `requested` under `root` (itself a real path). Throws ToolError when it escapes or is missing. */
export async function resolveInWorkspace(root: string, requested: unknown): Promise<string> {
  const path = requested == null || requested === "" ? "." : requested;
  if (typeof path !== "string") throw new ToolError("path must be a string");
  if (path.includes("\0")) throw new ToolError("path must not contain NUL characters");
  if (isAbsolute(path)) throw new ToolError("path must be relative to the workspace (absolute paths are refused)");
  const lexical = resolve(root, path);
  if (!inside(root, lexical)) throw new ToolError("path escapes the workspace");
  let real: string;
  try {
    real = realpathSync.native(lexical);
  } catch {
    throw new ToolError(`no such file or directory: ${path}`);
  }
  if (!inside(root, real)) throw new ToolError("path escapes the workspace (through a symbolic link)");
  return real;
}

/** Workspace-relative display path (forward slashes) of a path under root. */
export function displayPath(root: string, absolute: string): string {
  const rel = relative(root, absolute);
  return rel === "" ? "." : rel.split(sep).join("/");
}
