-- Up Migration
-- One chat row version per worker transition that changes history: _fence_history can bump snapshot_version in the
-- UPDATE that moves the fence (p_bump, and it returns the chat), and _begin_worker_transition asks it to when its
-- caller inserts history next (p_moves_history). Both signatures change, so the old ones go; sql/020 and sql/050
-- define the new ones. On a fresh database sql/ has not run yet, so they exist only on an upgraded one.
drop function if exists chat_private._fence_history(uuid);
drop function if exists chat_private._begin_worker_transition(uuid, text, uuid, bigint, bigint);
