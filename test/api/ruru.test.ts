// Ruru in development opens with the example structured request and the development token's header; the example
// is valid against the real schema (its createChat runs as the dev user). In production there is no token and no
// Ruru. A real server on its own database.
import { randomBytes } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EXAMPLE_QUERY, EXAMPLE_VARIABLES } from "../../src/api/ruru-defaults.ts";
import { startApi } from "../../src/api/server.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { apiRoleUrl } from "../security/support.ts";

let db: TestDatabase;
let apiDatabaseUrl: string;
test.before(async () => {
  db = await createTestDatabase();
  // The cluster-wide chatd_api password that every test file sets alike (files run at once).
  apiDatabaseUrl = await apiRoleUrl(db);
  await db.pool.query("update chat_private.experiments set enabled = true where name = 'chat-structured-output'");
});
test.after(() => db.drop());

const start = (development: boolean) => startApi({
  pool: db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl, jwtSecret: randomBytes(32).toString("hex"), development,
});

test("development: Ruru carries the example and the token header; the example's createChat runs", async () => {
  const api = await start(true);
  try {
    assert.ok(api.developmentToken, "a development token is returned to the caller");
    const html = await (await fetch(`${api.url}/graphiql`, { headers: { accept: "text/html" } })).text();
    assert.ok(html.includes(`Bearer ${api.developmentToken}`), "the token's Authorization header is filled in");
    assert.ok(html.includes("mutation CreateChat"), "the example mutation is the default query");
    const response = await fetch(api.graphqlUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${api.developmentToken}` },
      body: JSON.stringify({ query: EXAMPLE_QUERY, operationName: "CreateChat", variables: EXAMPLE_VARIABLES }),
    });
    const body = await response.json() as { data?: { createChat: { result: { chatId: string; structuredOutputRequestId: string } } }; errors?: unknown };
    assert.is(body.errors, undefined, JSON.stringify(body.errors));
    assert.match(body.data!.createChat.result.structuredOutputRequestId, /^[0-9a-f-]{36}$/);
  } finally {
    await api.close();
  }
});

test("production: no development token, no Ruru page", async () => {
  const api = await start(false);
  try {
    assert.is(api.developmentToken, undefined);
    const html = await (await fetch(`${api.url}/graphiql`, { headers: { accept: "text/html" } })).text();
    assert.not.ok(html.includes("mutation CreateChat"));
  } finally {
    await api.close();
  }
});

test.run();
