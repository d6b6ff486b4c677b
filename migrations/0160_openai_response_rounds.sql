-- Up Migration
-- Client tool rounds of a Response (docs/openai.md). A Response whose turn stops for client tools reads as
-- `completed` with `function_call` items; the client answers with a new Response that names it in
-- `previous_response_id` and carries `function_call_output` items, and the same turn continues. Each such
-- continuation is one row here: its own Response id, the request whose turn it continues, and the calls it answered
-- (frozen here, so the Response that asked for them reads the same ever after). The first Response of a request is
-- the request itself (openai_responses); the request's receipt shows on its newest round only.
create table chat_private.openai_response_rounds (
  id uuid primary key default gen_random_uuid(),
  request_id uuid not null references chat_public.structured_output_requests on delete cascade,
  owner_id uuid not null references chat_public.users on delete cascade,
  round integer not null check (round > 0),
  previous_id uuid not null,
  answered_calls jsonb not null check (jsonb_typeof(answered_calls) = 'array'),
  background boolean not null,
  -- What this call adds to the first Response's echo (its metadata).
  echo jsonb not null check (jsonb_typeof(echo) = 'object'),
  body_sha256 text not null check (body_sha256 ~ '^[0-9a-f]{64}$'),
  idempotency_key text check (octet_length(idempotency_key) <= 200),
  created_at timestamptz not null default now(),
  unique (request_id, round),
  unique (owner_id, idempotency_key)
);
alter table chat_private.openai_response_rounds enable row level security;
create policy select_all_operator on chat_private.openai_response_rounds for select to chat_operator using (true);
grant select on chat_private.openai_response_rounds to chat_operator;

-- The read returns the Response's own id, its previous one and its function calls (sql/150_webhooks.sql); the
-- cancel takes any Response id of the request. A fresh database has none yet (sql/ runs after the migrations).
drop function if exists chat_public.openai_response(uuid);
