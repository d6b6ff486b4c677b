// Per-run configuration read from the database: the chat's model config (with its secret, which never leaves
// this process and is never logged), the runtime settings rows and the enabled stop hooks.
//
// They are cached per pool (so per worker) and validated by chat_private.worker_config_version (sql/120), which
// every change of those tables bumps in its own transaction. Each cached row set carries the version read in the
// same statement (so the same snapshot) as its rows; a run passes the newest version it has seen (read by the
// acquire and turn-state statements it makes anyway) and an entry older than that is read again. So a change
// committed before a run's statement started is always seen, as when every run read the rows itself.
import type pg from "pg";
import type { ModelConfig, ModelOptions, ProviderKind } from "../../src/providers/index.ts";

interface Versioned<T> {
  version: bigint;
  value: T;
}

export interface StopHookRow {
  id: string;
  name: string;
  url: string;
  timeout_ms: number;
  secret: string | null;
}

class ConfigCache {
  settings: Versioned<RuntimeSettings> | undefined;
  readonly models = new Map<string, Versioned<ModelConfig | null>>();
  hooks: Versioned<StopHookRow[]> | undefined;
}

const caches = new WeakMap<pg.Pool, ConfigCache>();

function cacheFor(pool: pg.Pool): ConfigCache {
  let cache = caches.get(pool);
  if (cache == null) {
    cache = new ConfigCache();
    caches.set(pool, cache);
  }
  return cache;
}

/** An entry is usable when it is at least as new as the newest version the caller has seen. */
function fresh<T>(entry: Versioned<T> | undefined, seen: bigint | null): entry is Versioned<T> {
  return entry != null && seen != null && entry.version >= seen;
}

/** Keeps the newer of two entries (concurrent loads may finish out of order). */
function newer<T>(current: Versioned<T> | undefined, loaded: Versioned<T>): Versioned<T> {
  return current != null && current.version >= loaded.version ? current : loaded;
}

/** `seen`: the newest config version the run has read (null: always read). */
export async function loadModelConfig(pool: pg.Pool, id: string, seen: bigint | null = null): Promise<ModelConfig | null> {
  const cache = cacheFor(pool);
  const cached = cache.models.get(id);
  if (fresh(cached, seen)) return cached.value;
  const { rows } = await pool.query<{ config_version: string; provider: ProviderKind | null; model: string; base_url: string | null;
    context_limit: number; options: ModelOptions; api_key: string | null; enabled: boolean | null }>(
    `select v.version::text as config_version, m.provider, m.model, m.base_url, m.context_limit, m.options, m.enabled, s.api_key
     from chat_private.worker_config_version v
     left join (chat_private.model_configs m left join chat_private.model_config_secrets s on s.model_config_id = m.id)
       on m.id = $1
     where v.id`, [id]);
  const row = rows[0];
  const value: ModelConfig | null = row == null || row.provider == null || row.enabled !== true ? null : {
    provider: row.provider,
    model: row.model,
    ...(row.base_url != null ? { baseUrl: row.base_url } : {}),
    ...(row.api_key != null ? { apiKey: row.api_key } : {}),
    contextLimit: row.context_limit,
    options: row.options,
  };
  if (row != null) cache.models.set(id, newer(cache.models.get(id), { version: BigInt(row.config_version), value }));
  return value;
}

/** The enabled stop hooks in name order, with their secrets. */
export async function loadStopHookRows(pool: pg.Pool, seen: bigint | null = null): Promise<StopHookRow[]> {
  const cache = cacheFor(pool);
  if (fresh(cache.hooks, seen)) return cache.hooks.value;
  const { rows } = await pool.query<{ config_version: string; id: string | null; name: string; url: string; timeout_ms: number;
    secret: string | null }>(
    `select v.version::text as config_version, h.id, h.name, h.url, h.timeout_ms, s.secret
     from chat_private.worker_config_version v
     left join (chat_private.stop_hooks h left join chat_private.stop_hook_secrets s on s.hook_id = h.id) on h.enabled
     where v.id order by h.name`);
  const value = rows.flatMap((r) => r.id == null ? []
    : [{ id: r.id, name: r.name, url: r.url, timeout_ms: r.timeout_ms, secret: r.secret }]);
  const version = rows[0]?.config_version;
  if (version != null) cache.hooks = newer(cache.hooks, { version: BigInt(version), value });
  return value;
}

export interface RuntimeSettings {
  leaseSeconds: number;
  maxStepsPerTurn: number;
  retryMaxAttempts: number;
  retryInitialDelayMs: number;
  retryMaxDelayMs: number;
  /** Repairs after the first rejected finalization attempt (two). */
  finalizerRepairs: number;
  /** The watchdog's deadlines (watchdog.ts), in milliseconds. */
  streamIdleTimeoutMs: number;
  stepTimeoutMs: number;
  toolCallTimeoutMs: number;
  progressTimeoutMs: number;
}

const DEFAULTS: Record<string, number> = {
  lease_seconds: 30,
  max_steps_per_turn: 200,
  retry_max_attempts: 5,
  retry_initial_delay_ms: 1000,
  retry_max_delay_ms: 30_000,
  finalizer_repairs: 2,
  stream_idle_timeout_seconds: 120,
  step_timeout_seconds: 600,
  tool_call_timeout_seconds: 30,
  progress_timeout_seconds: 900,
};

export async function loadSettings(pool: pg.Pool, seen: bigint | null = null): Promise<RuntimeSettings> {
  const cache = cacheFor(pool);
  if (fresh(cache.settings, seen)) return cache.settings.value;
  const { rows } = await pool.query<{ config_version: string; name: string | null; value: unknown }>(
    `select v.version::text as config_version, s.name, s.value
     from chat_private.worker_config_version v left join chat_private.settings s on s.name = any($1) where v.id`,
    [Object.keys(DEFAULTS)]);
  const values = { ...DEFAULTS };
  for (const row of rows) {
    if (row.name == null) continue;
    const n = Number(row.value);
    if (Number.isFinite(n) && n >= 0) values[row.name] = n;
  }
  const settings: RuntimeSettings = {
    leaseSeconds: Math.max(1, values.lease_seconds!),
    maxStepsPerTurn: values.max_steps_per_turn!,
    retryMaxAttempts: Math.max(1, values.retry_max_attempts!),
    retryInitialDelayMs: values.retry_initial_delay_ms!,
    retryMaxDelayMs: values.retry_max_delay_ms!,
    finalizerRepairs: values.finalizer_repairs!,
    streamIdleTimeoutMs: Math.max(0.1, values.stream_idle_timeout_seconds!) * 1000,
    stepTimeoutMs: Math.max(0.1, values.step_timeout_seconds!) * 1000,
    toolCallTimeoutMs: Math.max(0.1, values.tool_call_timeout_seconds!) * 1000,
    progressTimeoutMs: Math.max(1, values.progress_timeout_seconds!) * 1000,
  };
  const version = rows[0]?.config_version;
  if (version != null) cache.settings = newer(cache.settings, { version: BigInt(version), value: settings });
  return settings;
}
