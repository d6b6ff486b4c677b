// isConnectionError (src/db/pool.ts): which failures are the database's (waited out, retried on a new connection)
// and which are the statement's (thrown to the caller). Behind a proxy that moves with failover, "not the primary"
// refusals are the database's: the same statement succeeds once the proxy reaches the new primary. The codes are
// asserted on a real server in test/ha/not-primary.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isConnectionError } from "../../src/db/pool.ts";

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

for (const [code, message] of [
  ["25006", "cannot execute INSERT in a read-only transaction"],
  ["25006", "cannot execute LISTEN during recovery"],
  ["0A000", "cannot set transaction read-write mode during recovery"],
  ["55000", "recovery is in progress"],
  ["57P01", "terminating connection due to administrator command"],
  ["57P02", "terminating connection because of crash of another server process"],
  ["57P03", "the database system is starting up"],
  ["57P05", "terminating connection due to idle-session timeout"],
  ["53300", "sorry, too many clients already"],
  ["08006", "connection failure"],
  ["08007", "transaction resolution unknown"],
  ["ECONNRESET", "read ECONNRESET"],
  ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"],
] as const) {
  test(`${code} (${message}) is a connection error`, () => {
    assert.ok(isConnectionError(pgError(code, message)));
  });
}

for (const message of ["Connection terminated unexpectedly", "Client has encountered a connection error and is not queryable",
  "timeout exceeded when trying to connect"]) {
  test(`pg's "${message}" (no code) is a connection error`, () => {
    assert.ok(isConnectionError(new Error(message)));
  });
}

for (const [code, message] of [
  ["0A000", "cannot insert into column \"id\" of view"],
  ["55000", "prepared transactions are disabled"],
  ["08P01", "unsupported startup parameter: options"],
  ["23505", "duplicate key value violates unique constraint"],
  ["25P02", "current transaction is aborted, commands ignored until end of transaction block"],
  ["42501", "permission denied for table chats"],
  ["40001", "could not serialize access due to concurrent update"],
] as const) {
  test(`${code} (${message}) is the statement's error, not the connection's`, () => {
    assert.not.ok(isConnectionError(pgError(code, message)));
  });
}

test("anything without a code or a connection message is not a connection error", () => {
  for (const value of [undefined, null, "Connection terminated", 42, new Error("boom"), { code: 25006 }]) {
    assert.not.ok(isConnectionError(value), String(value));
  }
});

test.run();
