-- Up Migration
-- Retention of transient rows (sql/160_data_lifecycle.sql run_retention): rows that exist to make a retry, a
-- delivery or a failure visible for a while, and that would otherwise grow with every write forever. Unlike the
-- chat rules (off by default: they delete what users wrote), these are on by default. A value changed before this
-- migration runs is kept.
insert into chat_private.settings (name, value, description) values
  ('idempotency_key_days', '7',
   'Idempotency keys older than this many days are deleted by the retention job: a retry with such a key creates anew. Keys chatd mints for batch items and subagents stay while their chat exists (0: never).'),
  ('webhook_delivery_days', '30',
   'Webhook deliveries that are delivered or failed, with their attempts, are deleted this many days after they were created (0: never).'),
  ('failed_job_days', '7',
   'Graphile Worker jobs that failed permanently (shown as failed_permanently in chat_private.job_queue) are deleted this many days after their last attempt (0: never).')
on conflict (name) do nothing;

-- The retention job's candidates by age, oldest first; and the deletion of a deleted chat's (or batch's) webhook
-- deliveries by the object they are about.
create index idempotency_keys_created_at on chat_private.idempotency_keys (created_at);
create index webhook_deliveries_created_at on chat_private.webhook_deliveries (created_at);
create index webhook_deliveries_subject on chat_private.webhook_deliveries (subject_id);
