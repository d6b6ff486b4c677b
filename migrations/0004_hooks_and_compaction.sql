-- Up Migration
-- Stop hooks (operator-configured HTTP webhooks called when a turn is about to finish) and compaction requests.
-- Functions, grants, policies and comments live in sql/100_hooks_and_compaction.sql.
create table chat_private.stop_hooks (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
  url text not null check (url ~ '^https?://' and length(url) <= 2048),
  timeout_ms integer not null default 10000 check (timeout_ms between 100 and 120000),
  enabled boolean not null default true,
  created_at timestamptz not null default now()
);

-- The signing secret sits in its own table so that chat_operator, which reads every other private table, never
-- sees it (the same split as model_config_secrets).
create table chat_private.stop_hook_secrets (
  hook_id uuid primary key references chat_private.stop_hooks on delete cascade,
  secret text not null check (length(secret) >= 16)
);

-- A client's manual compaction request, honoured by the runner before the chat's next model step.
alter table chat_public.chats add column compaction_requested_at timestamptz;
