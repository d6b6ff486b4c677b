-- Up Migration
-- The OpenAI-compatible surface (src/api/openai/): a Response is a structured output request. What the Responses
-- API carries beyond chatd's own request (the echo of `text`, `instructions`, `metadata`, `background`, the model
-- name as asked, and the idempotency key with the hash of the body it was first sent with) is kept here, one row
-- per request created through /v1. Clients reach it only through the security definer functions of
-- sql/150_webhooks.sql, so the table is private and has no client policy.
create table chat_private.openai_responses (
  request_id uuid primary key references chat_public.structured_output_requests on delete cascade,
  chat_id uuid not null references chat_public.chats on delete cascade,
  owner_id uuid not null references chat_public.users on delete cascade,
  background boolean not null,
  -- The echo of the create body's fields chatd keeps (model, instructions, text, metadata, tools).
  echo jsonb not null check (jsonb_typeof(echo) = 'object'),
  body_sha256 text not null check (body_sha256 ~ '^[0-9a-f]{64}$'),
  idempotency_key text check (octet_length(idempotency_key) <= 200),
  created_at timestamptz not null default now(),
  unique (owner_id, idempotency_key)
);
create index openai_responses_chat on chat_private.openai_responses (chat_id);
alter table chat_private.openai_responses enable row level security;
create policy select_all_operator on chat_private.openai_responses for select to chat_operator using (true);
grant select on chat_private.openai_responses to chat_operator;

-- Completion webhooks (Standard Webhooks). An endpoint belongs to a user; its secrets are private (the worker reads
-- them through chat_private.webhook_delivery_for_send only). A delivery is one event for one endpoint: its row is
-- written by the trigger on the request's terminal update, in the receipt's transaction, and its body (the exact
-- bytes signed and sent) and event id never change. Attempts are the delivery log.
create table chat_private.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references chat_public.users on delete cascade,
  url text not null check (url ~ '^https?://' and octet_length(url) <= 2048),
  events text[] not null check (cardinality(events) > 0 and events <@ array[
    'response.completed', 'response.failed', 'response.cancelled', 'response.incomplete',
    'batch.completed', 'batch.failed', 'batch.cancelled']),
  secret text not null check (secret ~ '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$'),
  -- After a rotation the previous secret signs too, until it expires, so receivers can switch without a gap.
  previous_secret text check (previous_secret ~ '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$'),
  previous_secret_expires_at timestamptz,
  enabled boolean not null default true,
  disabled_reason text,
  created_at timestamptz not null default now(),
  check ((previous_secret is null) = (previous_secret_expires_at is null))
);
create index webhook_endpoints_owner on chat_private.webhook_endpoints (owner_id);

create table chat_private.webhook_deliveries (
  id bigint generated always as identity primary key,
  endpoint_id uuid not null references chat_private.webhook_endpoints on delete cascade,
  event_id text not null unique check (event_id ~ '^evt_[0-9a-f]{32}$'),
  event_type text not null,
  -- The object the event is about (data.id): resp_<request uuid> or batch_<batch uuid>.
  subject_id text not null,
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  check ((status = 'pending') = (next_attempt_at is not null))
);
create index webhook_deliveries_endpoint on chat_private.webhook_deliveries (endpoint_id, id);

create table chat_private.webhook_attempts (
  delivery_id bigint not null references chat_private.webhook_deliveries on delete cascade,
  attempt integer not null,
  at timestamptz not null default now(),
  status_code integer,
  error text check (octet_length(error) <= 500),
  primary key (delivery_id, attempt)
);

alter table chat_private.webhook_endpoints enable row level security;
alter table chat_private.webhook_deliveries enable row level security;
alter table chat_private.webhook_attempts enable row level security;
create policy select_all_operator on chat_private.webhook_deliveries for select to chat_operator using (true);
create policy select_all_operator on chat_private.webhook_attempts for select to chat_operator using (true);
grant select on chat_private.webhook_deliveries, chat_private.webhook_attempts to chat_operator;

-- The trigger that writes deliveries; its function is defined in sql/150_webhooks.sql (and here first, for a
-- fresh database, where sql/ runs after the migrations).
create or replace function chat_private.tg_structured_output_requests__webhook() returns trigger as $$
begin
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
revoke all on function chat_private.tg_structured_output_requests__webhook() from public;
create trigger _950_webhook after update of status on chat_public.structured_output_requests
  for each row when (old.status = 'pending' and new.status <> 'pending')
  execute function chat_private.tg_structured_output_requests__webhook();
create or replace function chat_private.tg_batches__webhook() returns trigger as $$
begin
  return null;
end;
$$ language plpgsql security definer set search_path to pg_catalog, public, pg_temp;
revoke all on function chat_private.tg_batches__webhook() from public;
create trigger _950_webhook after update of status on chat_public.batches
  for each row when (old.status in ('validating', 'running') and new.status in ('completed', 'failed', 'canceled'))
  execute function chat_private.tg_batches__webhook();

