-- Up Migration
-- The worker's watchdog deadlines (worker/loop/watchdog.ts, docs/workers.md), as rows an operator can see and change.
-- A value changed before this migration runs is kept; a row that is absent means the same default to the worker.
insert into chat_private.settings (name, value, description) values
  ('stream_idle_timeout_seconds', '120',
   'A provider attempt whose stream sends nothing for this long is aborted and retried as a transport error.'),
  ('step_timeout_seconds', '600', 'A provider attempt that takes longer than this in all is aborted and retried.'),
  ('tool_call_timeout_seconds', '30', 'Deadline of a local tool call, for tools that set none of their own.'),
  ('progress_timeout_seconds', '900',
   'A run that makes no progress for this long stops renewing its lease, so another worker takes the chat. Keep it above the other deadlines and the exec tools'' timeout.')
on conflict (name) do nothing;
