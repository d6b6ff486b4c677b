-- Up Migration
-- MCP servers (operator-configured, selected per chat) and subagents (child chats, which already have
-- chats.parent_chat_id). Functions, policies and grants live in sql/110_mcp_and_subagents.sql.

-- One row per MCP server the deployment offers. `id` becomes part of tool names (mcp__<id>__<tool>), so it is short
-- and has no double underscore (the namespace separator).
create table chat_private.mcp_servers (
  id text primary key check (id ~ '^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$' and length(id) <= 32),
  transport text not null check (transport in ('stdio', 'http')),
  -- stdio: the program and its arguments (never run through a shell).
  command text,
  args jsonb not null default '[]' check (jsonb_typeof(args) = 'array'),
  -- http: the streamable-HTTP endpoint.
  url text check (url ~ '^https?://'),
  timeout_ms integer not null default 30000 check (timeout_ms between 100 and 600000),
  output_cap_bytes integer not null default 65536 check (output_cap_bytes between 1024 and 1048576),
  enabled boolean not null default true,
  description text,
  created_at timestamptz not null default now(),
  check ((transport = 'stdio' and command is not null and url is null) or (transport = 'http' and url is not null and command is null))
);

-- Credentials for a server: environment variables (stdio) and request headers (http). Readable by the worker only,
-- like model_config_secrets.
create table chat_private.mcp_server_secrets (
  server_id text primary key references chat_private.mcp_servers on delete cascade,
  env jsonb not null default '{}' check (jsonb_typeof(env) = 'object'),
  headers jsonb not null default '{}' check (jsonb_typeof(headers) = 'object')
);

-- The servers a chat uses, validated against chat_private.mcp_servers when set.
alter table chat_public.chats add column mcp_server_ids text[] not null default '{}'
  check (cardinality(mcp_server_ids) <= 16);
