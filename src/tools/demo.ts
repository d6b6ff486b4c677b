// The demo workspace that `npm start` creates on first start, so the scripted walk-through in the README
// (list the workspace, read a file, answer) works without any setup.
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export function defaultWorkspacesRoot(projectRoot: string): string {
  return process.env.CHATD_WORKSPACES_ROOT != null && process.env.CHATD_WORKSPACES_ROOT !== ""
    ? resolve(process.env.CHATD_WORKSPACES_ROOT)
    : join(projectRoot, ".chatd", "workspaces");
}

const FILES: Record<string, string> = {
  "README.md": "# Demo workspace\n\nA small folder that chatd's workspace tools can list, read and search.\n",
  "notes.txt": "chatd keeps its state machine in PostgreSQL.\nThe worker runs the model tool loop.\n",
};

/** Creates `<root>/demo` with two small files unless it exists. Returns its path. */
export async function ensureDemoWorkspace(root: string): Promise<string> {
  const folder = join(root, "demo");
  await mkdir(folder, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) {
    // `wx`: never overwrite what a user changed.
    await writeFile(join(folder, name), text, { flag: "wx" }).catch((error: { code?: string }) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  return folder;
}
