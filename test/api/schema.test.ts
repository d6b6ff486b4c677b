// schema.graphql is the public contract; it must match what the server builds (run `npm run schema:export`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildSchemaText } from "../../src/api/schema-text.ts";
import { projectRoot } from "../../src/db/database.ts";
import { startTestApi, type TestApi } from "./harness.ts";

let t: TestApi;
test.before(async () => { t = await startTestApi(); });
test.after(async () => { await t.close(); });

test("schema.graphql is current (npm run schema:export)", async () => {
  const committed = readFileSync(join(projectRoot, "schema.graphql"), "utf8");
  const built = await buildSchemaText(t.apiDatabaseUrl);
  assert.ok(committed === built, "schema.graphql is stale: run `npm run schema:export` and commit the result");
});

test("the depth limit refuses deep documents; Ruru is off outside development", async () => {
  // allChats > nodes > (chatMessagesByChatId > nodes > chatByChatId) x 4 > rowId: 15 levels.
  const hop = (inner: string) => `chatMessagesByChatId { nodes { chatByChatId { ${inner} } } }`;
  const deep = `query { allChats { nodes { ${hop(hop(hop(hop("rowId"))))} } } }`;
  // Paged, so that the nested connections stay within the estimated nodes (docs/security.md).
  const shallow = await t.gql(`query { allChats(first: 10) { nodes { ${hop("rowId").replace("ByChatId {", "ByChatId(first: 10) {")} } } }`, {}, null);
  assert.not.ok(shallow.errors);
  const response = await t.gql(deep, {}, null);
  assert.is(response.errors?.[0]?.extensions?.code, "QUERY_TOO_DEEP", JSON.stringify(response));
  // Ruru lives at /graphiql (`/` is the web console).
  const ruru = await fetch(t.api.url + "/graphiql");
  assert.ok(ruru.status === 404);
  const health = await fetch(t.api.url + "/health");
  assert.equal(await health.json(), { ok: true });
});

test.run();
