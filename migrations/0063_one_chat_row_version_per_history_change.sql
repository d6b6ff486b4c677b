-- Up Migration
-- One chat row version per transition that changes history, with _fence_history still the only writer of
-- history_version and generation_attempt.
--
-- Worker steps: _fence_history can bump snapshot_version in the UPDATE that moves the fence (p_bump, and it returns
-- the chat), and _begin_worker_transition asks it to when its caller inserts history next (p_moves_history). Both
-- signatures change, so the old ones go; sql/020 and sql/050 define the new ones. On a fresh database sql/ has not
-- run yet, so they exist only on an upgraded one.
drop function if exists chat_private._fence_history(uuid);
drop function if exists chat_private._begin_worker_transition(uuid, text, uuid, bigint, bigint);
-- Birth: a new chat row's fence is current (history_version = snapshot_version, generation_attempt 0), as the
-- defaults 0 and 0 said; create_chat_as set snapshot_version to 1, so its first history row's trigger had to move
-- the fence, a second version of the row it had just inserted. The birth snapshot is now the default of both
-- columns, and create_chat_as names neither: the fence is current from the insert on. Existing rows keep theirs.
alter table chat_public.chats alter column snapshot_version set default 1, alter column history_version set default 1;
