-- Up Migration
-- A running batch item holds one of its batch's slots 1..concurrency; the unique index makes "at most concurrency
-- items run" a property of the table, so a finishing item can hand its slot to the next pending item without
-- locking the batch row (sql/095_batches.sql). Items already running get slots in line order.
alter table chat_public.batch_items add column slot smallint check (slot between 1 and 64);
update chat_public.batch_items b set slot = r.n
from (select batch_id, line, row_number() over (partition by batch_id order by line) as n
      from chat_public.batch_items where status = 'running') r
where b.batch_id = r.batch_id and b.line = r.line;
alter table chat_public.batch_items add constraint batch_items_running_slot check (status <> 'running' or slot is not null);
create unique index batch_items_slot on chat_public.batch_items (batch_id, slot) where status = 'running';
comment on column chat_public.batch_items.slot is
  E'The concurrency slot (1 to the batch''s concurrency) a running item holds; at most one running item per slot.';
