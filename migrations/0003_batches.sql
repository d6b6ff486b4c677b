-- Up Migration
-- Batch runs: many structured requests with one response format, dispatched from the database with a
-- concurrency limit, each item becoming its own chat (idempotency key batch:<id>:<line>). The functions, triggers
-- and policies live in sql/095_batches.sql.
create type chat_public.batch_status as enum ('validating', 'running', 'completed', 'failed', 'canceled');
create type chat_public.batch_item_status as enum ('pending', 'running', 'succeeded', 'failed', 'canceled');

create table chat_public.batches (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references chat_public.users on delete cascade,
  name text check (length(name) <= 200),
  -- The parsed json_schema envelope {name, description?, schema}, as create_chat_as takes it.
  response_format jsonb not null check (jsonb_typeof(response_format) = 'object'),
  schema_sha256 text not null check (schema_sha256 ~ '^[0-9a-f]{64}$'),
  model_config_id text not null references chat_private.model_configs,
  workspace text check (workspace ~ '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$'),
  concurrency integer not null default 4 check (concurrency between 1 and 64),
  status chat_public.batch_status not null default 'validating',
  error text check (length(error) <= 2000),
  total_items integer not null check (total_items between 1 and 100000),
  idempotency_key text check (length(idempotency_key) between 1 and 200),
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- Last status change: the worker's sweep re-enqueues validation or cancellation jobs that a crash left locked.
  updated_at timestamptz not null default now(),
  unique (owner_id, idempotency_key),
  check ((status in ('completed', 'failed')) <= (finished_at is not null))
);
create index batches_owner on chat_public.batches (owner_id, created_at desc);
create index batches_active on chat_public.batches (status) where status in ('validating', 'running', 'canceled');

create table chat_public.batch_items (
  batch_id uuid not null references chat_public.batches on delete cascade,
  line integer not null check (line >= 1),
  content jsonb,
  status chat_public.batch_item_status not null default 'pending',
  chat_id uuid references chat_public.chats on delete set null,
  structured_output_request_id uuid unique references chat_public.structured_output_requests on delete set null,
  error_code text check (length(error_code) <= 64),
  error_message text check (length(error_message) <= 2000),
  started_at timestamptz,
  finished_at timestamptz,
  primary key (batch_id, line),
  check (status <> 'pending' or content is not null),
  check ((status in ('pending', 'running')) = (finished_at is null))
);
create index batch_items_pending on chat_public.batch_items (batch_id, line) where status = 'pending';
create index batch_items_running on chat_public.batch_items (batch_id) where status = 'running';
