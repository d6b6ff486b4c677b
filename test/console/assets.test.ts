// The console's files at `/` (built by `npm install`), its development-token hint, and what stays unserved.
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
