// Temporary folders of a test file, removed when its process exits (each test file runs in a process of its own),
// so a suite run leaves nothing in the system's temp folder. A process killed outright leaves its folders behind.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folders: string[] = [];
process.on("exit", () => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A new folder `<temp>/<prefix>XXXXXX`, removed when the process exits. */
export async function tempFolder(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  folders.push(folder);
  return folder;
}
