// The GraphQL cost boundary: each limit at N (served) and N+1 (refused with its code), counted after fragment
// expansion, over HTTP and websockets; the amplification documents that froze the process are refused at once
// while /health keeps answering.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Lexer, Source, TokenKind } from "postgraphile/graphql";
import { DEFAULT_COST_LIMITS as L } from "../../src/api/query-cost.ts";
import { startTestApi, type GraphQLResponse, type TestApi } from "../api/harness.ts";

let t: TestApi;
let token: string;

test.before(async () => {
  t = await startTestApi();
  token = (await t.user("costly")).token;
});
test.after(async () => {
  await t.close();
});

/** t.gql with an operation name. */
async function post(body: object, bearer: string | null): Promise<GraphQLResponse> {
  const response = await fetch(t.api.graphqlUrl, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, ...(await response.json() as object) };
}

const codeOf = (response: GraphQLResponse) => response.errors?.[0]?.extensions?.code ?? null;
const repeat = (n: number, fn: (i: number) => string) => Array.from({ length: n }, (_, i) => fn(i)).join(" ");

function tokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  return count;
}

/** allChats > nodes (2 levels), then 3 hops of chatMessagesByChatId > nodes > chatByChatId (9), then a leaf. One row
 * per page, so that the estimated nodes stay small. */
const hop = (inner: string) => `chatMessagesByChatId(first: 1) { nodes { chatByChatId { ${inner} } } }`;
const depth12 = `query { allChats(first: 1) { nodes { ${hop(hop(hop("rowId")))} } } }`;
const depth13 = `query { allChats(first: 1) { nodes { ${hop(hop(hop("chatMessagesByChatId { totalCount }")))} } } }`;

interface Row {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** null: served (no error from the cost check); otherwise the refusal's code. */
  code: string | null;
}

const aliases = (n: number) => `query { ${repeat(n, (i) => `a${i}: __typename`)} }`;
const typenames = (n: number) => `query { ${repeat(n, () => "__typename")} }`;
const operations = (n: number) => repeat(n, (i) => `query q${i} { __typename }`);
const page = (argument: string, value: number) => `query { allChats(${argument}: ${value}) { totalCount } }`;
/** Chats times messages per chat, plus the chats themselves, plus a second connection of `batches` rows. */
const nested = (chats: number, messages: number, batches: number) => `query { allChats(first: ${chats}) { nodes {
  messages(first: ${messages}) { nodes { rowId } } } } allBatches(first: ${batches}) { nodes { rowId } } }`;
// 249 + 249 * 1000 + 751 is the limit exactly.
const atNodeLimit = { chats: 249, messages: 1000, batches: L.maxNodes - 249 - 249 * 1000 };

const MATRIX: Row[] = [
  { name: `${L.maxAliases} aliases`, query: aliases(L.maxAliases), code: null },
  { name: `${L.maxAliases + 1} aliases`, query: aliases(L.maxAliases + 1), code: "TOO_MANY_ALIASES" },
  {
    name: `${L.maxAliases + 1} aliases through a fragment spread twice`,
    query: `query { ...F ...F } fragment F on Query { ${repeat(Math.ceil((L.maxAliases + 1) / 2), (i) => `f${i}: __typename`)} }`,
    code: "TOO_MANY_ALIASES",
  },
  { name: `${L.maxFields} fields`, query: typenames(L.maxFields), code: null },
  { name: `${L.maxFields + 1} fields`, query: typenames(L.maxFields + 1), code: "TOO_MANY_FIELDS" },
  {
    name: "fields multiplied by nested fragments (3 spreads of 3 spreads of 60 fields)",
    query: `query { ...A ...A ...A } fragment A on Query { ...B ...B ...B } fragment B on Query { ${repeat(60, () => "__typename")} }`,
    code: "TOO_MANY_FIELDS",
  },
  { name: "depth 12", query: depth12, code: null },
  { name: "depth 13", query: depth13, code: "QUERY_TOO_DEEP" },
  { name: `${L.maxOperations} operations`, query: operations(L.maxOperations), operationName: "q0", code: null },
  { name: `${L.maxOperations + 1} operations`, query: operations(L.maxOperations + 1), code: "TOO_MANY_OPERATIONS" },
  { name: `first: ${L.maxPageSize}`, query: page("first", L.maxPageSize), code: null },
  { name: `first: ${L.maxPageSize + 1}`, query: page("first", L.maxPageSize + 1), code: "PAGE_TOO_LARGE" },
  { name: `last: ${L.maxPageSize + 1}`, query: page("last", L.maxPageSize + 1), code: "PAGE_TOO_LARGE" },
  { name: "first: 2147483647", query: page("first", 2147483647), code: "PAGE_TOO_LARGE" },
  {
    name: `first: $n with n = ${L.maxPageSize + 1}`,
    query: "query($n: Int) { allChats(first: $n) { totalCount } }", variables: { n: L.maxPageSize + 1 }, code: "PAGE_TOO_LARGE",
  },
  {
    name: `first: $n defaulting to ${L.maxPageSize + 1}`,
    query: `query($n: Int = ${L.maxPageSize + 1}) { allChats(first: $n) { totalCount } }`, code: "PAGE_TOO_LARGE",
  },
  { name: "first: 0", query: page("first", 0), code: null },
  { name: "first: -1", query: page("first", -1), code: "INVALID_PAGE_ARGUMENT" },
  { name: "last: -1", query: page("last", -1), code: "INVALID_PAGE_ARGUMENT" },
  { name: "offset: -1", query: page("offset", -1), code: "INVALID_PAGE_ARGUMENT" },
  {
    name: `${L.maxNodes} estimated nodes (chats x messages per chat + chats + batches)`,
    query: nested(atNodeLimit.chats, atNodeLimit.messages, atNodeLimit.batches), code: null,
  },
  {
    name: `${L.maxNodes + 1} estimated nodes`,
    query: nested(atNodeLimit.chats, atNodeLimit.messages, atNodeLimit.batches + 1), code: "TOO_MANY_NODES",
  },
  {
    name: "1000 chats x 1000 messages each",
    query: "query { allChats(first: 1000) { nodes { messages(first: 1000) { nodes { rowId } } } } }", code: "TOO_MANY_NODES",
  },
  {
    name: `connections without first/last count as ${L.maxPageSize} rows each, nested ones multiplied`,
    query: "query { allChats { nodes { messages { edges { node { rowId } } } } } }", code: "TOO_MANY_NODES",
  },
  {
    name: "nested page sizes through a fragment and a variable",
    query: "query($n: Int) { allChats(first: $n) { ...F } } fragment F on ChatConnection { nodes { messages(first: 300) { nodes { rowId } } } }",
    variables: { n: 1000 }, code: "TOO_MANY_NODES",
  },
  {
    name: "100 chats, each with its structured requests unpaged (100 + 100 × 1000 rows)",
    query: "query { allChats(first: 100) { nodes { rowId structuredOutputRequestsByChatId { nodes { status } } } } }", code: null,
  },
  {
    name: "first: -1 inside a fragment",
    query: "query { ...F } fragment F on Query { allChats(first: -1) { totalCount } }", code: "INVALID_PAGE_ARGUMENT",
  },
];

for (const row of MATRIX) {
  test(`cost matrix: ${row.name} -> ${row.code ?? "served"}`, async () => {
    const response = await post({ query: row.query, variables: row.variables, operationName: row.operationName }, token);
    if (row.code === null) {
      assert.ok(!response.errors, JSON.stringify(response.errors));
    } else {
      assert.is(codeOf(response), row.code, JSON.stringify(response));
      assert.is(response.status, 400);
      assert.is(response.data, undefined, "nothing executed");
    }
  });
}

test(`a document of ${L.maxTokens} tokens is parsed and validated; one more token is refused (QUERY_TOO_LARGE)`, async () => {
  // query($x: [Int] = [0 0 ...]) { __typename }: 15 tokens around the list.
  const document = (n: number) => `query($x: [Int] = [${repeat(n, () => "0")}]) { __typename }`;
  assert.is(tokens(document(L.maxTokens - 15)), L.maxTokens);
  // Parsed and validated: the only complaint is GraphQL's own (the variable is unused), not a cost refusal.
  const atLimit = await t.gql(document(L.maxTokens - 15), {}, token);
  assert.equal(atLimit.errors?.map((error) => [error.message, error.extensions?.code]), [['Variable "$x" is never used.', undefined]]);
  const over = await t.gql(document(L.maxTokens - 14), {}, token);
  assert.is(codeOf(over), "QUERY_TOO_LARGE");
});

test("a body over the request limit still gets grafserv's own answer (413), not a cost refusal", async () => {
  const response = await fetch(t.api.graphqlUrl, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: "query { __typename }", variables: { pad: "x".repeat(1024 * 1024 + 1) } }),
  });
  assert.is(response.status, 413);
});

test("the limits hold over websockets too", async () => {
  const client = t.ws(token);
  const errors = await new Promise<unknown>((resolve) => {
    client.subscribe({ query: aliases(L.maxAliases + 1) }, {
      next: (value) => resolve(value.errors),
      error: (error) => resolve(error),
      complete: () => resolve(null),
    });
  });
  assert.is((errors as { extensions?: { code?: string } }[])[0]?.extensions?.code, "TOO_MANY_ALIASES", JSON.stringify(errors));
});

/**
 * The issue's documents: 20 spreads of a fragment of 100 aliases (3.9 KB), and 5,000 aliases (154 KB), no token.
 * `variant` makes each one new: grafserv caches validation and grafast plans per document text.
 */
const amplification = (variant: number) => [
  `query { ${repeat(20, () => "...F")} } fragment F on Query { ${repeat(100, (i) => `a${variant}_${i}: allChats { totalCount }`)} }`,
  `query { ${repeat(5000, (i) => `a${variant}_${i}: allChats { totalCount }`)} }`,
];

test("the amplification documents are refused in well under a second each, without a token", async () => {
  for (const [index, query] of amplification(0).entries()) {
    const started = performance.now();
    const response = await t.gql(query, {}, null);
    const elapsed = performance.now() - started;
    assert.ok(["TOO_MANY_ALIASES", "QUERY_TOO_LARGE"].includes(codeOf(response) ?? ""), JSON.stringify(response).slice(0, 300));
    assert.ok(elapsed < 1_000, `document ${index} took ${elapsed.toFixed(0)} ms`);
  }
});

// 300 distinct aliases (11 KB): without the limits, each kept the event loop busy planning for over a second.
const wide = (variant: number) => `query { ${repeat(300, (i) => `w${variant}_${i}: allChats { totalCount }`)} }`;

test("/health answers promptly while wide documents are being sent", async () => {
  let sending = true;
  let variant = 0;
  const senders = Array.from({ length: 4 }, async () => {
    let sent = 0;
    while (sending) {
      variant += 1;
      await t.gql(wide(variant), {}, null);
      sent += 1;
    }
    return sent;
  });
  const latencies: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const started = performance.now();
    const health = await fetch(t.api.url + "/health");
    assert.is(health.status, 200);
    latencies.push(performance.now() - started);
  }
  sending = false;
  const sent = (await Promise.all(senders)).reduce((a, b) => a + b, 0);
  assert.ok(sent >= 4, `${sent} documents sent meanwhile`);
  assert.ok(Math.max(...latencies) < 1_000, `/health latencies ${latencies.map((l) => l.toFixed(0)).join(", ")} ms`);
});

test.run();
