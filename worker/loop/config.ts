// Per-run configuration read from the database: the chat's model config (with its secret, which never leaves
// this process and is never logged) and the runtime settings rows.
import type pg from "pg";
import type { ModelConfig, ModelOptions, ProviderKind } from "../../src/providers/index.ts";

export async function loadModelConfig(pool: pg.Pool, id: string): Promise<ModelConfig | null> {
  const { rows } = await pool.query<{ provider: ProviderKind; model: string; base_url: string | null; context_limit: number;
    options: ModelOptions; api_key: string | null; enabled: boolean }>(
    `select m.provider, m.model, m.base_url, m.context_limit, m.options, m.enabled, s.api_key
     from chat_private.model_configs m left join chat_private.model_config_secrets s on s.model_config_id = m.id
     where m.id = $1`, [id]);
  const row = rows[0];
  if (row == null || !row.enabled) return null;
  return {
    provider: row.provider,
    model: row.model,
    ...(row.base_url != null ? { baseUrl: row.base_url } : {}),
    ...(row.api_key != null ? { apiKey: row.api_key } : {}),
    contextLimit: row.context_limit,
    options: row.options,
  };
}

export interface RuntimeSettings {
  leaseSeconds: number;
  maxStepsPerTurn: number;
  retryMaxAttempts: number;
  retryInitialDelayMs: number;
  retryMaxDelayMs: number;
  /** Repairs after the first rejected finalization attempt (design §4: two). */
  finalizerRepairs: number;
}

const DEFAULTS: Record<string, number> = {
  lease_seconds: 30,
  max_steps_per_turn: 200,
  retry_max_attempts: 5,
  retry_initial_delay_ms: 1000,
  retry_max_delay_ms: 30_000,
  finalizer_repairs: 2,
};

export async function loadSettings(pool: pg.Pool): Promise<RuntimeSettings> {
  const { rows } = await pool.query<{ name: string; value: unknown }>(
    "select name, value from chat_private.settings where name = any($1)", [Object.keys(DEFAULTS)]);
  const values = { ...DEFAULTS };
  for (const row of rows) {
    const n = Number(row.value);
    if (Number.isFinite(n) && n >= 0) values[row.name] = n;
  }
  return {
    leaseSeconds: Math.max(1, values.lease_seconds!),
    maxStepsPerTurn: values.max_steps_per_turn!,
    retryMaxAttempts: Math.max(1, values.retry_max_attempts!),
    retryInitialDelayMs: values.retry_initial_delay_ms!,
    retryMaxDelayMs: values.retry_max_delay_ms!,
    finalizerRepairs: values.finalizer_repairs!,
  };
}
