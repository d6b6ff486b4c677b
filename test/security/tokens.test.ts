// The token boundary and the production defaults around it: which bearer tokens run a request as their user and
// which are refused (401 UNAUTHENTICATED, never downgraded to anonymous); what an anonymous caller may see of the
// schema in production; who may read /metrics on the API port; and the inputs that used to end in an opaque
// INTERNAL error.
import { createHmac } from "node:crypto";
import jwt from "jsonwebtoken";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { identify, signToken, TOKEN_AUDIENCE } from "../../src/api/auth.ts";
import { startTestApi, type TestApi } from "../api/harness.ts";

let t: TestApi;
let user: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  user = await t.user("holder");
});
test.after(async () => {
  await t.close();
});

const now = () => Math.floor(Date.now() / 1000);
const DAY = 86_400;
const sign = (claims: object, secret = t.secret, options: jwt.SignOptions = { algorithm: "HS256" }) => jwt.sign(claims, secret, options);

/** An HS256 token over any payload (jsonwebtoken refuses to sign some of the malformed claims below). */
function rawSign(claims: object): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}`;
  return `${unsigned}.${createHmac("sha256", t.secret).update(unsigned).digest("base64url")}`;
}

/** [name, Authorization header, allowed]: allowed rows run as the user, the others are refused with 401. */
function rows(): [string, string, boolean][] {
  const sub = user.id;
  const aud = TOKEN_AUDIENCE;
  const base = { sub, aud };
  return [
    ["chatd's own token (30 days)", `Bearer ${user.token}`, true],
    ["exp 1 hour", `Bearer ${sign({ ...base, exp: now() + 3600 })}`, true],
    ["exp at the maximum lifetime (90 days, no iat)", `Bearer ${sign({ ...base, exp: now() + 90 * DAY - 5 })}`, true],
    ["lowercase scheme", `bearer ${user.token}`, true],
    ["no exp", `Bearer ${sign(base)}`, false],
    ["exp beyond the maximum lifetime", `Bearer ${sign({ ...base, exp: now() + 91 * DAY })}`, false],
    ["iat + maximum lifetime exceeded", `Bearer ${sign({ ...base, iat: now() - 10 * DAY, exp: now() + 85 * DAY })}`, false],
    ["exp as a string", `Bearer ${rawSign({ ...base, exp: String(now() + 3600) })}`, false],
    ["hand-signed HS256 with a numeric exp (the control for the row above)", `Bearer ${rawSign({ ...base, exp: now() + 3600 })}`, true],
    ["expired", `Bearer ${sign({ ...base, exp: now() - 60 })}`, false],
    ["not yet valid (nbf)", `Bearer ${sign({ ...base, exp: now() + 3600, nbf: now() + 600 })}`, false],
    ["forged (another secret)", `Bearer ${sign({ ...base, exp: now() + 3600 }, "another-secret-that-is-long-enough-0123456789")}`, false],
    ["wrong audience", `Bearer ${sign({ sub, aud: "other", exp: now() + 3600 })}`, false],
    ["no audience", `Bearer ${sign({ sub, exp: now() + 3600 })}`, false],
    ["sub not a user id", `Bearer ${sign({ sub: "admin", aud, exp: now() + 3600 })}`, false],
    ["no sub", `Bearer ${sign({ aud, exp: now() + 3600 })}`, false],
    ["alg none", `Bearer ${sign({ ...base, exp: now() + 3600 }, "", { algorithm: "none" })}`, false],
    ["HS512", `Bearer ${sign({ ...base, exp: now() + 3600 }, t.secret, { algorithm: "HS512" })}`, false],
    ["truncated signature", `Bearer ${user.token.slice(0, -4)}`, false],
    ["not a JWT", "Bearer hello", false],
    ["no scheme", user.token, false],
    ["Basic scheme", `Basic ${Buffer.from("a:b").toString("base64")}`, false],
    ["two tokens", `Bearer ${user.token} ${user.token}`, false],
    ["Bearer without a token", "Bearer", false],
  ];
}

test("token matrix over HTTP: allowed rows run as the user, every other row is 401 UNAUTHENTICATED", async () => {
  for (const [name, authorization, allowed] of rows()) {
    const response = await fetch(t.api.graphqlUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify({ query: "query { allUsers { nodes { rowId } } }" }),
    });
    const body = await response.json() as { data?: { allUsers: { nodes: { rowId: string }[] } }; errors?: { extensions?: { code?: string } }[] };
    if (allowed) {
      assert.is(response.status, 200, name);
      assert.equal(body.data?.allUsers.nodes.map((node) => node.rowId), [user.id], name);
    } else {
      assert.is(response.status, 401, name);
      assert.is(body.errors?.[0]?.extensions?.code, "UNAUTHENTICATED", name);
    }
  }
});

test("the same matrix through identify(), which websockets use as well", () => {
  for (const [name, authorization, allowed] of rows()) {
    assert.is(identify(t.secret, authorization).kind, allowed ? "user" : "invalid", name);
  }
});

test("signToken (chatd token, the development token) always sets exp and refuses more than the maximum", () => {
  const claims = jwt.decode(signToken(t.secret, user.id)) as { exp?: number; iat?: number };
  assert.is(claims.exp! - claims.iat!, 30 * DAY);
  assert.throws(() => signToken(t.secret, user.id, 91 * DAY), /at most/);
  const previous = process.env.CHATD_TOKEN_MAX_LIFETIME_DAYS;
  process.env.CHATD_TOKEN_MAX_LIFETIME_DAYS = "1";
  try {
    assert.throws(() => signToken(t.secret, user.id, 2 * DAY), /at most/);
    assert.is(identify(t.secret, `Bearer ${sign({ sub: user.id, aud: TOKEN_AUDIENCE, exp: now() + 2 * DAY })}`).kind, "invalid");
    assert.is(identify(t.secret, `Bearer ${sign({ sub: user.id, aud: TOKEN_AUDIENCE, exp: now() + DAY - 5 })}`).kind, "user");
  } finally {
    if (previous === undefined) delete process.env.CHATD_TOKEN_MAX_LIFETIME_DAYS;
    else process.env.CHATD_TOKEN_MAX_LIFETIME_DAYS = previous;
  }
});

test("production: anonymous introspection is refused (INTROSPECTION_DISABLED); a user may introspect; __typename stays", async () => {
  const anonymous = await t.gql("query { __schema { queryType { name } } }", {}, null);
  assert.is(anonymous.errors?.[0]?.extensions?.code, "INTROSPECTION_DISABLED");
  const viaFragment = await t.gql("query { ...F } fragment F on Query { __type(name: \"Chat\") { name } }", {}, null);
  assert.is(viaFragment.errors?.[0]?.extensions?.code, "INTROSPECTION_DISABLED");
  const authenticated = await t.gql<{ __schema: { queryType: { name: string } } }>("query { __schema { queryType { name } } }", {}, user.token);
  assert.is(authenticated.data?.__schema.queryType.name, "Query");
  const typename = await t.gql<{ __typename: string }>("query { __typename }", {}, null);
  assert.is(typename.data?.__typename, "Query");
});

test("production: validation errors carry no \"Did you mean\" suggestions", async () => {
  const response = await t.gql("query { allChat { totalCount } }", {}, null);
  const message = response.errors?.[0]?.message ?? "";
  assert.match(message, /Cannot query field "allChat"/);
  assert.not.match(message, /Did you mean/);
});

test("production: /metrics on the API port is off without CHATD_METRICS_TOKEN, and needs that token with it", async () => {
  const previous = process.env.CHATD_METRICS_TOKEN;
  try {
    delete process.env.CHATD_METRICS_TOKEN;
    assert.is((await fetch(t.api.url + "/metrics")).status, 404);
    process.env.CHATD_METRICS_TOKEN = "metrics-token-for-the-test";
    assert.is((await fetch(t.api.url + "/metrics")).status, 401);
    assert.is((await fetch(t.api.url + "/metrics", { headers: { authorization: "Bearer wrong" } })).status, 401);
    assert.is((await fetch(t.api.url + "/metrics", { headers: { authorization: `Bearer ${user.token}` } })).status, 401);
    const ok = await fetch(t.api.url + "/metrics", { headers: { authorization: "Bearer metrics-token-for-the-test" } });
    assert.is(ok.status, 200);
    assert.match(await ok.text(), /chatd_/);
  } finally {
    if (previous === undefined) delete process.env.CHATD_METRICS_TOKEN;
    else process.env.CHATD_METRICS_TOKEN = previous;
  }
});

test("formerly opaque INTERNAL errors are typed refusals", async () => {
  for (const query of ["query { allBatches { nodes { rowId } } }", "query { allBatchItems { nodes { line } } }"]) {
    const response = await t.gql<Record<string, { nodes: unknown[] }>>(query, {}, null);
    assert.not.ok(response.errors, `${query}: ${JSON.stringify(response.errors)}`);
    assert.equal(Object.values(response.data!)[0]!.nodes, [], "anonymous sees no rows");
  }
  const negative = await t.gql("query { allChats(first: -1) { totalCount } }", {}, user.token);
  assert.is(negative.errors?.[0]?.extensions?.code, "INVALID_PAGE_ARGUMENT");
  const nul = await t.gql("mutation($c: JSON!) { createChat(input: {content: $c}) { result { chatId } } }",
    { c: [{ type: "text", text: "nul \u0000 inside" }] }, user.token);
  assert.is(nul.errors?.[0]?.extensions?.code, "INVALID_INPUT", JSON.stringify(nul.errors));
  const nulTitle = await t.gql("mutation($c: JSON!, $title: String) { createChat(input: {content: $c, title: $title}) { result { chatId } } }",
    { c: [{ type: "text", text: "fine" }], title: "nul \u0000 title" }, user.token);
  assert.is(nulTitle.errors?.[0]?.extensions?.code, "INVALID_INPUT", JSON.stringify(nulTitle.errors));
});

test.run();
