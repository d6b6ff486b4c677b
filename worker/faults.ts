// Named fault-injection points for kill and recovery tests (notes: DBOS debug trigger points). Inert unless
// configured, through CHATD_FAULTS or WorkerOptions.faults: `point:action[,point:action]`, e.g.
// `after_assistant_commit:exit`. Actions: `exit` (process.exit(137), like a SIGKILL mid-step), `hang` (never
// returns: the lease expires while the process lives on), `throw` (an unexpected error in the task).

export const FAULT_POINTS = [
  "provider_stream",
  // After a step is committed with its turn still open (loop/step-commit.ts): one that leaves work in the turn (calls,
  // a pause, a rejected finalizer batch), or one that ends it while a stop hook is enabled (hooks run before the end).
  "after_assistant_commit",
  // In front of the one transaction that commits a step ending the turn and ends it (loop/step-commit.ts).
  "before_final_commit",
  "during_tool_execution",
  // After a batch's local results are committed, or handed on to ride with the next commit (loop/results.ts).
  "after_tool_results",
  // Structured output: after a candidate (with the turn still open: a stop hook is enabled) or a rejected
  // (placeholder) batch is committed, after the receipt.
  "after_candidate_commit", "after_placeholder_commit", "after_receipt_commit",
  // Stop hooks: after a hook answered, before anything of its answer is committed.
  "during_hook_call",
  // Graphile Worker's queue pool hands out a connection (after start-up): `hang` stalls the job runner silently.
  "queue_checkout",
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];
export type FaultAction = "exit" | "hang" | "throw";
export type Faults = Partial<Record<FaultPoint, FaultAction>>;

export function parseFaults(spec: string | undefined): Faults {
  const faults: Faults = {};
  for (const item of (spec ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const [point, action] = item.split(":");
    if (!(FAULT_POINTS as readonly string[]).includes(point ?? "") || !["exit", "hang", "throw"].includes(action ?? "")) {
      throw new Error(`CHATD_FAULTS: unknown fault "${item}" (points: ${FAULT_POINTS.join(", ")}; actions: exit, hang, throw)`);
    }
    faults[point as FaultPoint] = action as FaultAction;
  }
  return faults;
}

/** Fires the configured action at `point`; a no-op (synchronous) when none is configured. */
export function fault(faults: Faults, point: FaultPoint): void | Promise<never> {
  const action = faults[point];
  if (action == null) return;
  if (action === "exit") {
    process.stderr.write(`chatd fault injection: exiting at ${point}\n`);
    process.exit(137);
  }
  if (action === "throw") throw new Error(`chatd fault injection: ${point}`);
  return new Promise<never>(() => {});
}
