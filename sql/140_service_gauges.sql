-- The database gauges of /metrics (src/metrics.ts) in one call. Security definer, so that the API's login
-- (chatd_api, which has no rights of its own and reads nothing but this) serves system-wide counts without a grant
-- on any table, Graphile Worker's included, and without the owner's connection. Counts only: no row, id or content
-- leaves the function. The worker's metrics server reads the same numbers through it.
create or replace function chat_private.service_gauges() returns json as $$
  select pg_catalog.json_build_object(
    'receipts', (select coalesce(pg_catalog.json_agg(r), '[]') from (
       select status::text, error_code as code, pg_catalog.count(*)::int as n
       from chat_public.structured_output_requests where status <> 'pending' group by 1, 2) r),
    'pending', (select pg_catalog.count(*)::int from chat_public.structured_output_requests where status = 'pending'),
    'turns', (select coalesce(pg_catalog.json_agg(t), '[]') from (
       select case when finished_at is null then 'open' else 'finished' end as state, pg_catalog.count(*)::int as n
       from chat_private.turn_progress group by 1) t),
    'jobs', (select coalesce(pg_catalog.json_agg(j), '[]') from (
       select task_identifier as task,
              case when locked_at is not null then 'locked' when run_at > pg_catalog.now() then 'scheduled' else 'ready' end as state,
              pg_catalog.count(*)::int as n
       from graphile_worker.jobs group by 1, 2) j),
    'queued', (select pg_catalog.count(*)::int from chat_public.chat_queued_messages),
    'recoveries', (select coalesce(pg_catalog.sum(recoveries), 0)::int from chat_private.turn_progress),
    'stuck', (select pg_catalog.count(*)::int from chat_private.stuck_chats),
    'batches', (select coalesce(pg_catalog.json_agg(b), '[]') from (
       select status::text, pg_catalog.count(*)::int as n from chat_public.batches group by 1) b),
    'items', (select coalesce(pg_catalog.json_agg(i), '[]') from (
       select i.status::text, pg_catalog.count(*)::int as n
       from chat_public.batch_items i join chat_public.batches b on b.id = i.batch_id
       where b.finished_at is null group by 1) i))
$$ language sql stable security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.service_gauges() is
  'The counts behind the database gauges of /metrics (receipts, pending requests, turns, job queue, chat queues, lease recoveries, stuck chats, batches), as one JSON object.';
select chat_private.grant_execute('chat_private.service_gauges()', '{chatd_api, chat_worker}');
