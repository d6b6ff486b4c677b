// Waiting on a condition that no event announces (a lock wait in pg_stat_activity, a process reaped by init): checked
// every 25 ms until it holds, and a loud failure naming what did not happen once the deadline passes.
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
