-- Up Migration
-- Webhook endpoints in GraphQL, each user's own (sql/150_webhooks.sql): what an endpoint reads as without its
-- secrets, and what adding one or rotating its secret answers, the secret shown that once.
create type chat_public.webhook_endpoint as (
  id uuid,
  url text,
  events text[],
  enabled boolean,
  disabled_reason text,
  rotating boolean,
  created_at timestamptz,
  pending bigint,
  delivered bigint,
  failed bigint
);
create type chat_public.webhook_endpoint_secret as (
  endpoint_id uuid,
  secret text
);
