-- Up Migration
-- The database server's epoch as the lease sweep last saw it (sql/070 chat_private._server_epoch): a restart (a new
-- postmaster start time), a promotion (a new WAL timeline: a Patroni failover or switchover) or another cluster
-- (a new system identifier) begins a new one. A promoted replica keeps the old primary's postmaster start time,
-- so the start time alone (the sweep's former restart grace) did not see a failover. One row.
create table chat_private.server_epoch (
  one boolean primary key default true check (one),
  epoch text not null,
  -- When the sweep or an alive report first saw this epoch: leases that expired before it are not taken for a
  -- lease length after it (their runners could not renew them while the server was away).
  observed_at timestamptz not null,
  -- The last alive report of the previous epoch: a worker whose liveness lapsed before it died before the outage.
  last_seen_before timestamptz
);
alter table chat_private.server_epoch enable row level security;
comment on table chat_private.server_epoch is
  E'The database server epoch (system identifier, timeline, postmaster start) the lease sweep last saw, and when.';
