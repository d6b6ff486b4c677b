-- Up Migration
create type chat_public.chat_status as enum ('waiting', 'running', 'interrupting', 'requires_action', 'error');
create type chat_public.message_role as enum ('system', 'user', 'assistant', 'tool');
create type chat_public.message_visibility as enum ('user', 'model', 'both');
create type chat_public.message_kind as enum ('message', 'receipt', 'control', 'summary');
create type chat_public.structured_output_status as enum ('pending', 'succeeded', 'failed', 'canceled');

create table chat_public.users (
  id uuid primary key default gen_random_uuid(),
  name text not null unique check (name ~ '^[A-Za-z0-9_.@-]{1,64}$'),
  created_at timestamptz not null default now()
);

create table chat_private.model_configs (
  id text primary key check (id ~ '^[A-Za-z0-9_.:-]{1,64}$'),
  provider text not null check (provider in ('openai-responses', 'openai-chat', 'openai-compatible', 'anthropic', 'scripted')),
  model text not null check (length(model) between 1 and 200),
  base_url text,
  context_limit integer not null default 128000 check (context_limit > 0),
  compaction_threshold_percent integer not null default 70 check (compaction_threshold_percent between 1 and 100),
  options jsonb not null default '{}' check (jsonb_typeof(options) = 'object'),
  is_default boolean not null default false,
  enabled boolean not null default true,
  created_at timestamptz not null default now()
);
create unique index model_configs_one_default on chat_private.model_configs (is_default) where is_default;

-- Secrets live in their own table so that chat_operator, which reads every other private table, never sees them.
create table chat_private.model_config_secrets (
  model_config_id text primary key references chat_private.model_configs on delete cascade,
  api_key text not null
);

create table chat_public.chats (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references chat_public.users on delete cascade,
  title text check (length(title) <= 200),
  model_config_id text not null references chat_private.model_configs,
  status chat_public.chat_status not null default 'waiting',
  archived boolean not null default false,
  plan_mode boolean not null default false,
  parent_chat_id uuid references chat_public.chats on delete cascade,
  dynamic_tools jsonb not null default '[]' check (jsonb_typeof(dynamic_tools) = 'array'),
  workspace text check (length(workspace) <= 1024),
  pending_tool_calls jsonb not null default '[]' check (jsonb_typeof(pending_tool_calls) = 'array'),
  requires_action_deadline_at timestamptz,
  retry_state jsonb,
  last_error jsonb,
  snapshot_version bigint not null default 0,
  history_version bigint not null default 0,
  queue_version bigint not null default 0,
  generation_attempt bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (not archived or status in ('waiting', 'error')),
  check ((status = 'requires_action') = (requires_action_deadline_at is not null))
);
create index chats_owner on chat_public.chats (owner_id, created_at desc);
create index chats_parent on chat_public.chats (parent_chat_id) where parent_chat_id is not null;
create index chats_runnable on chat_public.chats (id) where status in ('running', 'interrupting');

create table chat_public.structured_output_requests (
  id uuid primary key default gen_random_uuid(),
  chat_id uuid not null references chat_public.chats on delete cascade,
  name text not null check (name ~ '^[A-Za-z0-9_-]{1,64}$'),
  description text check (octet_length(description) <= 1024),
  schema jsonb not null check (jsonb_typeof(schema) = 'object'),
  schema_sha256 text not null check (schema_sha256 ~ '^[0-9a-f]{64}$'),
  status chat_public.structured_output_status not null default 'pending',
  error_code text,
  error_message text check (length(error_message) <= 2000),
  receipt_message_id bigint unique,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  check ((status = 'pending') = (receipt_message_id is null)),
  check ((status = 'pending') = (finished_at is null)),
  check (case status
    when 'pending' then error_code is null
    when 'succeeded' then error_code is null
    when 'failed' then error_code in ('not_produced', 'validation_exhausted', 'refused', 'generation_failed', 'configuration_error')
    when 'canceled' then error_code in ('interrupted', 'superseded', 'queue_deleted', 'operator_canceled')
  end)
);
create index structured_output_requests_chat on chat_public.structured_output_requests (chat_id);
create index structured_output_requests_pending on chat_public.structured_output_requests (chat_id) where status = 'pending';

create table chat_public.chat_messages (
  id bigserial primary key,
  chat_id uuid not null references chat_public.chats on delete cascade,
  role chat_public.message_role not null,
  visibility chat_public.message_visibility not null default 'both',
  kind chat_public.message_kind not null default 'message',
  content jsonb not null check (jsonb_typeof(content) = 'array'),
  compressed boolean not null default false,
  deleted boolean not null default false,
  revision bigint,
  created_by uuid references chat_public.users on delete set null,
  usage jsonb,
  structured_output_request_id uuid references chat_public.structured_output_requests,
  structured_output jsonb,
  created_at timestamptz not null default now(),
  -- The two-way receipt rule: structured_output exists exactly on receipts, and a receipt has exactly this shape.
  constraint chat_messages_receipt_shape check (
    (kind = 'receipt') = (structured_output is not null)
    and (kind <> 'receipt' or (role = 'assistant' and visibility = 'user' and structured_output_request_id is not null))
  )
);
create index chat_messages_chat on chat_public.chat_messages (chat_id, id);
create unique index chat_messages_one_receipt_per_request on chat_public.chat_messages (structured_output_request_id)
  where kind = 'receipt';
alter table chat_public.structured_output_requests
  add constraint structured_output_requests_receipt_fk foreign key (receipt_message_id) references chat_public.chat_messages;

create sequence chat_public.chat_queued_messages_position;
create table chat_public.chat_queued_messages (
  id bigserial primary key,
  chat_id uuid not null references chat_public.chats on delete cascade,
  content jsonb not null check (jsonb_typeof(content) = 'array'),
  position bigint not null default nextval('chat_public.chat_queued_messages_position'),
  structured_output_request_id uuid unique references chat_public.structured_output_requests,
  created_by uuid references chat_public.users on delete set null,
  created_at timestamptz not null default now()
);
create index chat_queued_messages_order on chat_public.chat_queued_messages (chat_id, position);

-- The runner lease: no foreign keys, so that heartbeats never take locks on the chat row.
create table chat_private.chat_leases (
  chat_id uuid primary key,
  runner_id uuid not null,
  worker_id text not null,
  acquired_at timestamptz not null default now(),
  expires_at timestamptz not null
);

create table chat_private.turn_progress (
  id bigserial primary key,
  chat_id uuid not null references chat_public.chats on delete cascade,
  input_message_id bigint references chat_public.chat_messages on delete set null,
  structured_output_request_id uuid references chat_public.structured_output_requests,
  steps integer not null default 0,
  hook_continuations integer not null default 0,
  recoveries integer not null default 0,
  rejected_batches integer not null default 0,
  value_rejected boolean not null default false,
  candidate_present boolean not null default false,
  candidate_value jsonb,
  candidate_step integer,
  candidate_message_id bigint,
  invalidations integer not null default 0,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  check (candidate_present or candidate_value is null)
);
create unique index turn_progress_one_open_turn on chat_private.turn_progress (chat_id) where finished_at is null;

create table chat_private.message_internals (
  message_id bigint primary key references chat_public.chat_messages on delete cascade,
  provider_metadata jsonb,
  finish jsonb,
  finalizer_screening jsonb
);

create table chat_private.experiments (
  name text primary key,
  enabled boolean not null default false,
  description text not null,
  updated_at timestamptz not null default now()
);

create table chat_private.settings (
  name text primary key,
  value jsonb not null,
  description text not null
);

create table chat_private.idempotency_keys (
  owner_id uuid not null references chat_public.users on delete cascade,
  key text not null check (length(key) between 1 and 200),
  operation text not null,
  result jsonb not null,
  created_at timestamptz not null default now(),
  primary key (owner_id, key)
);

create table chat_private.transition_rules (
  transition text not null,
  from_state text not null check (from_state in ('waiting', 'running', 'interrupting', 'requires_action', 'error', 'archived')),
  allowed boolean not null,
  outcome text not null,
  primary key (transition, from_state)
);
