// The console's files at `/` (built by `npm install`), its development-token hint, and what stays unserved; the
// security headers of every route; development's token served only to a loopback Host and Origin.
import { request } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startApi } from "../../src/api/server.ts";
import { startTestApi, type TestApi } from "../api/harness.ts";

let t: TestApi;
test.before(async () => { t = await startTestApi(); });
test.after(() => t.close());

test("GET / is the console page and its bundle is served from /console/, with no other origin named", async () => {
  const page = await fetch(`${t.api.url}/`);
  assert.is(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /text\/html/);
  const html = await page.text();
  assert.match(html, /src="\/console\/app\.js"/);
  assert.not.match(html, /https?:\/\//, "no CDN");
  const script = await fetch(`${t.api.url}/console/app.js`);
  assert.is(script.status, 200);
  assert.match(script.headers.get("content-type") ?? "", /javascript/);
  assert.not.match(await script.text(), /https:\/\/(cdn|unpkg|esm\.sh)/);
});

test("paths outside console/dist are not served; in production there is no development token and no Ruru", async () => {
  assert.is((await fetch(`${t.api.url}/console/..%2f..%2fpackage.json`)).status, 404);
  assert.is((await fetch(`${t.api.url}/console/nope.js`)).status, 404);
  const config = await (await fetch(`${t.api.url}/console/config.json`)).json() as { developmentToken: string | null };
  assert.is(config.developmentToken, null);
  const ruru = await fetch(`${t.api.url}/graphiql`);
  assert.is.not(ruru.status, 200);
});

/** A GET with headers fetch() will not send (Host). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject).end();
  });
}

test("every route sends frame-ancestors 'none', X-Frame-Options DENY, nosniff, a Referrer-Policy and COOP; the page gets the console's CSP", async () => {
  const routes: [string, RequestInit][] = [
    ["/", {}], ["/console/app.js", {}], ["/console/style.css", {}], ["/console/config.json", {}], ["/console/nope.js", {}],
    ["/health", {}], ["/metrics", {}], ["/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: '{"query":"{__typename}"}' }],
    ["/graphql", { method: "POST", headers: { authorization: "Bearer nope" } }], ["/api/chat", { method: "POST" }], ["/nowhere", {}],
  ];
  for (const [path, init] of routes) {
    const response = await fetch(`${t.api.url}${path}`, init);
    await response.arrayBuffer();
    const csp = response.headers.get("content-security-policy") ?? "";
    assert.match(csp, /frame-ancestors 'none'/, `${path} CSP`);
    assert.is(response.headers.get("x-frame-options"), "DENY", path);
    assert.is(response.headers.get("x-content-type-options"), "nosniff", path);
    assert.is(response.headers.get("referrer-policy"), "no-referrer", path);
    assert.is(response.headers.get("cross-origin-opener-policy"), "same-origin", path);
    if (path === "/") assert.match(csp, /default-src 'none'; script-src 'self'; style-src 'self'/);
    else assert.match(csp, /^default-src 'none'; frame-ancestors/, `${path} loads nothing`);
  }
});

test("production serves no source map; development does", async () => {
  assert.is((await fetch(`${t.api.url}/console/app.js.map`)).status, 404);
  const dev = await startApi({ pool: t.db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl: t.apiDatabaseUrl, jwtSecret: t.secret, development: true });
  try {
    assert.is((await fetch(`${dev.url}/console/app.js.map`)).status, 200);
  } finally {
    await dev.close();
  }
});

test("development: the token and Ruru only for a loopback Host and Origin (a DNS-rebinding page gets neither)", async () => {
  const dev = await startApi({ pool: t.db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl: t.apiDatabaseUrl, jwtSecret: t.secret, development: true });
  const port = new URL(dev.url).port;
  const token = async (headers: Record<string, string>) => (JSON.parse((await get(`${dev.url}/console/config.json`, headers)).body) as { developmentToken: string | null }).developmentToken;
  try {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) assert.type(await token({ host }), "string", host);
    assert.type(await token({ host: `localhost:${port}`, origin: `http://localhost:${port}` }), "string");
    assert.is(await token({ host: `evil.test:${port}` }), null, "a foreign Host");
    assert.is(await token({ host: `127.0.0.1.evil.test:${port}` }), null);
    assert.is(await token({ host: `127.0.0.1:${port}`, origin: "http://evil.test" }), null, "a foreign Origin");
    assert.is(await token({ host: `127.0.0.1:${port}`, origin: "null" }), null, "an opaque Origin");
    for (const [path, accept] of [["/graphiql", "text/html"], ["/graphql", "text/html"]] as const) {
      const foreign = await get(`${dev.url}${path}`, { host: `evil.test:${port}`, accept });
      assert.is(foreign.status, 403, `${path} for a foreign Host`);
      assert.not.match(foreign.body, /Bearer/);
      const local = await get(`${dev.url}${path}`, { host: `localhost:${port}`, accept });
      assert.is(local.status, 200, `${path} for localhost`);
      assert.match(String(local.headers["content-security-policy"]), /frame-ancestors 'none'/);
    }
  } finally {
    await dev.close();
  }
});

test("outside production: Ruru at /graphiql, and the sign-in form gets the development token the server logs", async () => {
  const dev = await startApi({ pool: t.db.pool, port: 0, host: "127.0.0.1", apiDatabaseUrl: t.apiDatabaseUrl, jwtSecret: t.secret,
    development: true });
  try {
    const ruru = await fetch(`${dev.url}/graphiql`, { headers: { accept: "text/html" } });
    assert.is(ruru.status, 200);
    assert.match(await ruru.text(), /ruru/i);
    const config = await (await fetch(`${dev.url}/console/config.json`)).json() as { developmentToken: string | null };
    assert.type(config.developmentToken, "string");
    const chats = await t.gql("{ allChats { totalCount } }", {}, config.developmentToken);
    assert.not.ok(chats.errors, "the token is a valid token for the dev user");
  } finally {
    await dev.close();
  }
});

test.run();
