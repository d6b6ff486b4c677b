// The one place that knows this build cannot finalize structured output yet (the structured-output runtime
// replaces this module and offers the `coder_structured_output` finalizer). A turn that carries a pending
// structured request ends with a configuration_error receipt, so no request is ever left pending.

export const STRUCTURED_NOT_SUPPORTED = {
  status: "failed",
  code: "configuration_error",
  message: "this chatd build cannot finalize structured output yet",
} as const;

/** The finish_turn outcome for a turn the model finished: null (no request) or the configuration failure. */
export function structuredOutcome(turn: { structuredRequestPending: boolean }): object | null {
  return turn.structuredRequestPending ? STRUCTURED_NOT_SUPPORTED : null;
}
