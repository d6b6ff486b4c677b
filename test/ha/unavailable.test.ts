// The API's answer to a lost database connection (src/api/errors.ts maskError): a typed, retryable UNAVAILABLE,
// never INTERNAL, with `outcome` saying whether the write may have committed ("unknown": retry with the same
// idempotency key) or provably did not ("not_applied").
import { GraphQLError } from "postgraphile/graphql";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { maskError } from "../../src/api/errors.ts";

/** A pg DatabaseError as grafserv hands it to maskError (wrapped in a GraphQLError). */
function fromPostgres(code: string | undefined, message: string): GraphQLError {
  const original = Object.assign(new Error(message), code == null ? {} : { code, severity: "ERROR" });
  return new GraphQLError(message, { originalError: original, path: ["sendMessage"] });
}

for (const [code, message, outcome] of [
  [undefined, "Connection terminated unexpectedly", "unknown"],
  ["57P01", "terminating connection due to administrator command", "unknown"],
  ["ECONNRESET", "read ECONNRESET", "unknown"],
  ["25006", "cannot execute INSERT in a read-only transaction", "not_applied"],
  ["0A000", "cannot set transaction read-write mode during recovery", "not_applied"],
  ["57P03", "the database system is starting up", "not_applied"],
  ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432", "not_applied"],
] as const) {
  test(`${code ?? "no code"} (${message}) is UNAVAILABLE, retryable, outcome ${outcome}`, () => {
    const masked = maskError(fromPostgres(code, message));
    assert.equal(masked.extensions, { code: "UNAVAILABLE", retryable: true, outcome });
    assert.match(masked.message, /retry/);
    assert.not.match(masked.message, new RegExp(message), "the driver's message is not passed on");
  });
}

test("any other unexpected error stays INTERNAL", () => {
  const masked = maskError(fromPostgres("XX000", "something broke"));
  assert.is(masked.extensions.code, "INTERNAL");
});

test.run();
