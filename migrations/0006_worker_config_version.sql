-- Up Migration
-- One row whose version every change of the rows the worker caches per process bumps (see sql/120_worker_caches.sql).
create table chat_private.worker_config_version (
  id boolean primary key default true check (id),
  version bigint not null default 1
);
insert into chat_private.worker_config_version (id, version) values (true, 1);
alter table chat_private.worker_config_version enable row level security;
