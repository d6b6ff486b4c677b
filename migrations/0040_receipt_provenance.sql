-- Up Migration
-- Provenance of every receipt: how it came about, written with the receipt (chat_private.record_receipt, from the
-- request's turns, their messages' usage and the chat's model config) and never changed after. Receipts written
-- before this migration keep null provenance; the constraint holds for every receipt written from now on.
alter table chat_public.structured_output_requests
  add column finalization_attempts integer check (finalization_attempts >= 0),
  add column model_steps integer check (model_steps >= 0),
  add column model_config_id text,
  add column provider text,
  add column model text,
  add column input_tokens bigint check (input_tokens >= 0),
  add column output_tokens bigint check (output_tokens >= 0),
  add column started_at timestamptz;
alter table chat_public.structured_output_requests add constraint structured_output_requests_provenance
  check (status = 'pending' or (finalization_attempts is not null and model_steps is not null)) not valid;
comment on column chat_public.structured_output_requests.finalization_attempts is
  E'Assistant batches judged against the request: rejected ones (a text-only answer, a bad finalizer call, an invalid value) and accepted candidates (also one a stop hook discarded). Null while pending.';
comment on column chat_public.structured_output_requests.model_steps is E'Model steps of the request''s turn. Null while pending.';
comment on column chat_public.structured_output_requests.model_config_id is E'The chat''s model config when the receipt was written.';
comment on column chat_public.structured_output_requests.provider is E'That model config''s provider.';
comment on column chat_public.structured_output_requests.model is E'That model config''s model id.';
comment on column chat_public.structured_output_requests.input_tokens is
  E'Input tokens summed over the turn''s model calls that reported usage; null when none did.';
comment on column chat_public.structured_output_requests.output_tokens is
  E'Output tokens summed over the turn''s model calls that reported usage; null when none did.';
comment on column chat_public.structured_output_requests.started_at is
  E'When the request''s turn started; null for a request that never ran (deleted from the queue, superseded while queued).';

-- The GraphQL receipt type (chat_public.structured_output, migration 0008) carries the same facts.
create type chat_public.structured_output_provenance as (
  finalization_attempts integer, model_steps integer, model_config_id text, provider text, model text,
  input_tokens bigint, output_tokens bigint, started_at timestamptz, finished_at timestamptz, schema_sha256 text);
comment on type chat_public.structured_output_provenance is
  E'How a receipt came about: finalization attempts, model steps, the model config (provider, model id) of the chat, tokens summed over the turn''s model calls (null where no provider reported them), when the turn started and the receipt was written, and the schema hash.';
alter type chat_public.structured_output add attribute provenance chat_public.structured_output_provenance;
