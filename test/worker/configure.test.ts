// Start-up provider configuration from environment variables (no provider is called) and the demo workspace.
import { readdir } from "node:fs/promises";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { configureProvidersFromEnv } from "../../src/providers/configure.ts";
import { ensureDemoWorkspace } from "../../src/tools/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { tempFolder } from "../support/temp.ts";

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after(async () => {
  await db.drop();
});

const defaultId = async () => (await db.pool.query("select id from chat_private.model_configs where is_default")).rows[0]?.id;

test("no credentials: scripted stays the default", async () => {
  assert.equal(await configureProvidersFromEnv(db.pool, {}), { configured: [], defaultId: "scripted" });
  assert.is(await defaultId(), "scripted");
});

test("credentials become model configs with secrets; the first replaces scripted as the default", async () => {
  const result = await configureProvidersFromEnv(db.pool, {
    ANTHROPIC_API_KEY: "sk-ant-test", CHATD_OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1",
  });
  assert.equal(result, { configured: ["anthropic", "openai-compatible"], defaultId: "anthropic" });
  const { rows } = await db.pool.query(
    `select m.id, m.provider, m.base_url, s.api_key from chat_private.model_configs m
     left join chat_private.model_config_secrets s on s.model_config_id = m.id where m.id <> 'scripted' order by m.id`);
  assert.equal(rows, [
    { id: "anthropic", provider: "anthropic", base_url: null, api_key: "sk-ant-test" },
    { id: "openai-compatible", provider: "openai-compatible", base_url: "http://127.0.0.1:9/v1", api_key: null },
  ]);
  // An operator's choice is kept on the next start.
  await db.pool.query("update chat_private.model_configs set is_default = false where is_default");
  await db.pool.query("update chat_private.model_configs set is_default = true where id = 'openai-compatible'");
  await configureProvidersFromEnv(db.pool, { OPENAI_API_KEY: "sk-test" });
  assert.is(await defaultId(), "openai-compatible");
});

test("a key-less default falls back to scripted when the credentials are gone", async () => {
  await db.pool.query("update chat_private.model_configs set is_default = false where is_default");
  await db.pool.query("update chat_private.model_configs set is_default = true where id = 'anthropic'");
  await db.pool.query("delete from chat_private.model_config_secrets where model_config_id = 'anthropic'");
  await configureProvidersFromEnv(db.pool, {});
  assert.is(await defaultId(), "scripted");
});

test("the demo workspace is created once with two files", async () => {
  const root = await tempFolder("chatd-demo-");
  const folder = await ensureDemoWorkspace(root);
  await ensureDemoWorkspace(root);
  assert.equal((await readdir(folder)).sort(), ["README.md", "notes.txt"]);
});

test.run();
