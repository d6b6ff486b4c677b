// The SQLSTATE registry of sql/README.md as data: each registered code's GraphQL `code` and, for field errors
// without a `column` of their own, the field. test/api/error-codes.test.ts parses the README table and asserts
// this one equals it, so SQL and TypeScript cannot drift apart. `field: "column"` means "the pg error's column".

export interface RegisteredCode {
  code: string;
  /** The field path, `"column"` to use the error's column, or null for errors about no field. */
  field: string | null;
}

export const ERROR_CODES: Readonly<Record<string, RegisteredCode>> = {
  NOAUT: { code: "UNAUTHENTICATED", field: null },
  CHNTF: { code: "NOT_FOUND", field: "chat_id" },
  MSNTF: { code: "NOT_FOUND", field: "message_id" },
  QMNTF: { code: "NOT_FOUND", field: "queued_message_id" },
  SONTF: { code: "NOT_FOUND", field: null },
  CHARC: { code: "CHAT_ARCHIVED", field: null },
  CHTRN: { code: "TRANSITION_NOT_ALLOWED", field: null },
  CHFNC: { code: "FENCE_LOST", field: null },
  CHLSD: { code: "LEASE_HELD", field: null },
  CIINV: { code: "INVALID_INPUT", field: "column" },
  IDKEY: { code: "IDEMPOTENCY_KEY_REUSED", field: "idempotency_key" },
  RFINV: { code: "INVALID_RESPONSE_FORMAT", field: "column" },
  RFOFF: { code: "STRUCTURED_OUTPUT_DISABLED", field: "response_format" },
  RFPLN: { code: "STRUCTURED_OUTPUT_IN_PLAN_MODE", field: "response_format" },
  RFCHD: { code: "STRUCTURED_OUTPUT_ON_CHILD_CHAT", field: "response_format" },
  RFTNM: { code: "RESERVED_TOOL_NAME", field: "dynamic_tools" },
  RFSTL: { code: "RESPONSE_FORMAT_CHANGED", field: "response_format" },
  SOACT: { code: "STRUCTURED_OUTPUT_ACTIVE", field: "enabled" },
  SONCD: { code: "NO_CANDIDATE", field: null },
  SODON: { code: "REQUEST_FINISHED", field: null },
  TLRES: { code: "TOOL_RESULTS_MISMATCH", field: "results" },
  RCIMM: { code: "RECEIPT_IMMUTABLE", field: null },
  RCFRB: { code: "RECEIPT_FORBIDDEN", field: null },
  RVMAN: { code: "INTERNAL", field: null },
  MSIMM: { code: "INTERNAL", field: null },
  BTNTF: { code: "NOT_FOUND", field: "batch_id" },
  BTLIM: { code: "BATCH_TOO_LARGE", field: "items" },
  BTDON: { code: "BATCH_FINISHED", field: null },
  AGDEP: { code: "AGENT_DEPTH_EXCEEDED", field: null },
  AGLIM: { code: "AGENT_LIMIT", field: null },
  SODEL: { code: "REQUEST_DELETED", field: null },
  USNTF: { code: "NOT_FOUND", field: "user_id" },
  WHNTF: { code: "NOT_FOUND", field: "endpoint_id" },
};
