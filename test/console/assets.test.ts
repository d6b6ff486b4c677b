// The console's files at `/` (built by `npm install`), its development-token hint, and what stays unserved.
import { createServer } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { serveConsole, isConsoleRequest } from "../../src/api/ui-chat/console-assets.ts";
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

test("outside production the sign-in form gets the development token", async () => {
  const server = createServer((req, res) => {
    if (isConsoleRequest(req)) void serveConsole(req, res, "dev-token-123");
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const config = await (await fetch(`http://127.0.0.1:${port}/console/config.json`)).json() as { developmentToken: string | null };
  assert.is(config.developmentToken, "dev-token-123");
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test.run();
