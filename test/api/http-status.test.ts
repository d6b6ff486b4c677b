// The HTTP status of each registered code: refusals are 4xx (clients must not retry them), a database that is
// failing over is 503 (clients and proxies retry it), and only a fault is 500.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ERROR_CODES } from "../../src/api/error-codes.ts";
import { statusOfCode } from "../../src/api/http/errors.ts";
import { GraphQLRefusal } from "../../src/api/ui-chat/graphql.ts";

test("UNAVAILABLE from GraphQL answers 503 on the useChat routes", () => {
  assert.is(statusOfCode("UNAVAILABLE"), 503);
  assert.is(new GraphQLRefusal("the database is failing over", "UNAVAILABLE").status, 503);
});

test("every registered SQLSTATE code but a fault's is a 4xx refusal", () => {
  for (const { code } of Object.values(ERROR_CODES)) {
    if (code === "INTERNAL") continue;
    const status = statusOfCode(code);
    assert.ok(status >= 400 && status < 500, `${code} answers ${status}`);
  }
  assert.is(statusOfCode("INTERNAL"), 500);
});

test.run();
