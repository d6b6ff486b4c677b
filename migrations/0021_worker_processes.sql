-- Up Migration
-- Which worker processes are alive, as each reports it with every lease sweep (worker/index.ts). The sweep uses it
-- to tell a job locked by a live worker from one that a killed worker fetched into its local queue and will never
-- run: the chat of such a job has no lease, and is re-enqueued at the next sweep instead of after a lease length.
create table chat_private.worker_processes (
  queue_id text primary key,
  worker_id text not null,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now(),
  expires_at timestamptz not null
);
comment on table chat_private.worker_processes is
  E'Live worker processes: queue_id is Graphile Worker''s locked_by for the jobs the process fetches, worker_id is chatd''s (host:pid:suffix, as in lease_holders). A row whose expires_at passed belongs to a process that stopped reporting (killed).';
grant select on chat_private.worker_processes to chat_operator;

-- chat_private.job_queue gains a column (locked_by_dead_worker) before failed_permanently, which `create or replace
-- view` cannot do: the old view goes here, and sql/090 creates the new one with its grant.
drop view if exists chat_private.job_queue;
