// Start-up provider configuration from the environment (README "Providers"): each present credential becomes
// (or refreshes) a row in chat_private.model_configs with its key in model_config_secrets. The default model
// moves off the built-in `scripted` config only when it is still the default, so an operator's own choice made
// in SQL is never overridden; with no credentials at all, a default that cannot run without a key falls back to
// `scripted`. Keys are written to the database only, never logged.
import type pg from "pg";
import type { ProviderKind } from "./types.ts";

interface EnvConfig {
  id: string;
  provider: ProviderKind;
  model: string;
  baseUrl: string | null;
  apiKey: string | null;
}

export function modelConfigsFromEnv(env: NodeJS.ProcessEnv): EnvConfig[] {
  const configs: EnvConfig[] = [];
  const value = (name: string): string | null => (env[name] != null && env[name] !== "" ? env[name] : null);
  const openai = value("OPENAI_API_KEY");
  if (openai != null) {
    configs.push({ id: "openai", provider: "openai-responses", model: value("CHATD_OPENAI_MODEL") ?? "gpt-4.1-mini",
      baseUrl: value("OPENAI_BASE_URL"), apiKey: openai });
  }
  const anthropic = value("ANTHROPIC_API_KEY");
  if (anthropic != null) {
    configs.push({ id: "anthropic", provider: "anthropic", model: value("CHATD_ANTHROPIC_MODEL") ?? "claude-sonnet-4-5",
      baseUrl: value("ANTHROPIC_BASE_URL"), apiKey: anthropic });
  }
  const compatible = value("CHATD_OPENAI_COMPATIBLE_BASE_URL");
  if (compatible != null) {
    configs.push({ id: "openai-compatible", provider: "openai-compatible",
      model: value("CHATD_OPENAI_COMPATIBLE_MODEL") ?? "llama3.1", baseUrl: compatible,
      apiKey: value("CHATD_OPENAI_COMPATIBLE_API_KEY") });
  }
  return configs;
}

/** Upserts the environment's model configs. Returns their ids and the default model config id afterwards. */
export async function configureProvidersFromEnv(pool: pg.Pool, env: NodeJS.ProcessEnv = process.env):
  Promise<{ configured: string[]; defaultId: string | null }> {
  const configs = modelConfigsFromEnv(env);
  const client = await pool.connect();
  try {
    await client.query("begin");
    for (const c of configs) {
      await client.query(
        `insert into chat_private.model_configs (id, provider, model, base_url) values ($1, $2, $3, $4)
         on conflict (id) do update set provider = excluded.provider, model = excluded.model, base_url = excluded.base_url,
           enabled = true`, [c.id, c.provider, c.model, c.baseUrl]);
      if (c.apiKey != null) {
        await client.query(
          `insert into chat_private.model_config_secrets (model_config_id, api_key) values ($1, $2)
           on conflict (model_config_id) do update set api_key = excluded.api_key`, [c.id, c.apiKey]);
      } else {
        await client.query("delete from chat_private.model_config_secrets where model_config_id = $1", [c.id]);
      }
    }
    const current = (await client.query<{ id: string; provider: string; has_key: boolean }>(
      `select m.id, m.provider, s.model_config_id is not null as has_key from chat_private.model_configs m
       left join chat_private.model_config_secrets s on s.model_config_id = m.id where m.is_default`)).rows[0];
    let next: string | null = current?.id ?? null;
    if (configs.length > 0 && (current == null || current.provider === "scripted")) next = configs[0]!.id;
    if (configs.length === 0 && current != null && current.provider !== "scripted" && current.provider !== "openai-compatible"
        && !current.has_key) next = "scripted";
    if (next !== (current?.id ?? null) && next != null) {
      await client.query("update chat_private.model_configs set is_default = false where is_default");
      await client.query("update chat_private.model_configs set is_default = true where id = $1", [next]);
    }
    await client.query("commit");
    return { configured: configs.map((c) => c.id), defaultId: next };
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
