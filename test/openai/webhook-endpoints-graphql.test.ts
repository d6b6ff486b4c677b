// Webhook endpoints through GraphQL, each user's own: add answers the whsec_ secret once (the one the worker signs
// with), the listing has no secret field, another user's endpoint reads and refuses as not found, rotation answers
// a new secret and keeps the old one signing for overlapHours (0 to 168: 168 taken, 169 refused), and the limits
// hold at N and N + 1 (16 endpoints per user; URL and event checks name their field).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestApi, type TestApi } from "../api/harness.ts";
import { asUser } from "../support/chats.ts";
import { sqlState } from "../support/db.ts";

let t: TestApi;
let alice: { id: string; token: string };
let bob: { id: string; token: string };

test.before(async () => {
  t = await startTestApi();
  alice = await t.user("alice");
  bob = await t.user("bob");
});
test.after(() => t.close());

interface GqlError { message: string; extensions?: { code?: string; validations?: { field: string }[] } }
type Answer<T> = { data?: T; errors?: GqlError[] };

const ADD = `mutation($url: String!, $events: [String]) { addWebhookEndpoint(input: {url: $url, events: $events}) {
  result { endpointId secret } } }`;
const LIST = `query { webhookEndpoints { nodes { rowId url events enabled rotating pending delivered failed } } }`;
const REMOVE = `mutation($id: UUID!) { removeWebhookEndpoint(input: {endpointId: $id}) { result } }`;
const ROTATE = `mutation($id: UUID!, $hours: Int) { rotateWebhookEndpointSecret(input: {endpointId: $id, overlapHours: $hours}) {
  result { endpointId secret } } }`;

type Added = Answer<{ addWebhookEndpoint: { result: { endpointId: string; secret: string } } }>;

const add = (token: string, url: string, events: string[] | null = null) => t.gql(ADD, { url, events }, token) as Promise<Added>;

function codeOf(answer: Answer<unknown>): { code?: string; field?: string } {
  const error = answer.errors?.[0];
  return { code: error?.extensions?.code, field: error?.extensions?.validations?.[0]?.field };
}

async function storedSecrets(id: string): Promise<{ secret: string; previous_secret: string | null }> {
  const { rows } = await t.db.pool.query("select secret, previous_secret from chat_private.webhook_endpoints where id = $1", [id]);
  return rows[0];
}

test("add answers the secret once; the listing is the caller's own and has no secret; remove is owner-only", async () => {
  const added = await add(alice.token, "https://hooks.example.com/chatd", ["response.completed", "batch.failed"]);
  const { endpointId, secret } = added.data!.addWebhookEndpoint.result;
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(await storedSecrets(endpointId), { secret, previous_secret: null });
  const mine = await t.gql<{ webhookEndpoints: { nodes: Record<string, unknown>[] } }>(LIST, {}, alice.token);
  assert.equal(mine.data!.webhookEndpoints.nodes, [{ rowId: endpointId, url: "https://hooks.example.com/chatd",
    events: ["response.completed", "batch.failed"], enabled: true, rotating: false, pending: "0", delivered: "0", failed: "0" }]);
  const theirs = await t.gql<{ webhookEndpoints: { nodes: unknown[] } }>(LIST, {}, bob.token);
  assert.equal(theirs.data!.webhookEndpoints.nodes, []);
  const fields = await t.gql<{ __type: { fields: { name: string }[] } }>(`query { __type(name: "WebhookEndpoint") { fields { name } } }`, {}, alice.token);
  assert.not.ok(fields.data!.__type.fields.some((field) => /secret/i.test(field.name)));
  assert.equal(codeOf(await t.gql(REMOVE, { id: endpointId }, bob.token)), { code: "NOT_FOUND", field: "endpoint_id" });
  assert.equal(codeOf(await t.gql(ROTATE, { id: endpointId, hours: 1 }, bob.token)), { code: "NOT_FOUND", field: "endpoint_id" });
  // The SQLSTATE under that NOT_FOUND: WHNTF, as for an id that never was.
  for (const id of [endpointId, "00000000-0000-4000-8000-000000000000"]) {
    assert.is(await asUser(t.db, bob.id, (client) => sqlState(client.query("select chat_public.remove_webhook_endpoint($1)", [id]))), "WHNTF");
  }
  const removed = await t.gql<{ removeWebhookEndpoint: { result: string } }>(REMOVE, { id: endpointId }, alice.token);
  assert.is(removed.data!.removeWebhookEndpoint.result, endpointId);
  assert.equal((await t.gql<{ webhookEndpoints: { nodes: unknown[] } }>(LIST, {}, alice.token)).data!.webhookEndpoints.nodes, []);
  // Without a token there is no user to own an endpoint.
  assert.ok((await t.gql(ADD, { url: "https://hooks.example.com/x" })).errors);
});

test("rotate answers a new secret; the old one signs for overlapHours, 0 to 168", async () => {
  const { endpointId, secret } = (await add(alice.token, "https://hooks.example.com/rotate")).data!.addWebhookEndpoint.result;
  const rotated = await t.gql<{ rotateWebhookEndpointSecret: { result: { secret: string } } }>(ROTATE, { id: endpointId, hours: 168 }, alice.token);
  const next = rotated.data!.rotateWebhookEndpointSecret.result.secret;
  assert.is.not(next, secret);
  assert.equal(await storedSecrets(endpointId), { secret: next, previous_secret: secret });
  const list = await t.gql<{ webhookEndpoints: { nodes: { rotating: boolean }[] } }>(LIST, {}, alice.token);
  assert.is(list.data!.webhookEndpoints.nodes[0]!.rotating, true);
  for (const hours of [169, -1]) {
    assert.equal(codeOf(await t.gql(ROTATE, { id: endpointId, hours }, alice.token)), { code: "INVALID_INPUT", field: "overlap_hours" });
  }
  await t.gql(ROTATE, { id: endpointId, hours: 0 }, alice.token);
  assert.is((await storedSecrets(endpointId)).previous_secret, null);
  await t.gql(REMOVE, { id: endpointId }, alice.token);
});

test("limits: 16 endpoints per user, the 17th refused; URLs and events are checked with their field", async () => {
  for (let i = 0; i < 16; i++) assert.not.ok((await add(bob.token, `https://hooks.example.com/${i}`)).errors);
  assert.equal(codeOf(await add(bob.token, "https://hooks.example.com/16")), { code: "INVALID_INPUT", field: "url" });
  for (const url of ["ftp://hooks.example.com/", "https://user:pw@hooks.example.com/", "hooks.example.com", `https://h.example/${"x".repeat(2049 - "https://h.example/".length)}`]) {
    assert.equal(codeOf(await add(alice.token, url)), { code: "INVALID_INPUT", field: "url" }, url);
  }
  assert.equal(codeOf(await add(alice.token, "https://hooks.example.com/", ["response.done"])), { code: "INVALID_INPUT", field: "events" });
  assert.equal(codeOf(await add(alice.token, "https://hooks.example.com/", [])), { code: "INVALID_INPUT", field: "events" });
  assert.not.ok((await add(alice.token, `https://h.example/${"x".repeat(2048 - "https://h.example/".length)}`)).errors);
});

test.run();
