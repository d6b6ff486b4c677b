// Whether a process id names a running process. Signal 0 alone is not enough: a killed process whose parent has not
// reaped it yet (a zombie, e.g. an orphan waiting for whoever adopted it) still answers it, so Linux's
// /proc/<pid>/stat is read for its state. Where that file cannot be read for another reason than the process being
// gone (no /proc), signal 0's answer stands.
import { readFileSync } from "node:fs";

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}
