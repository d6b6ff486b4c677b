-- Up Migration
-- Objects earlier versions created and the repeatable sql/ files then dropped on every application (tombstones):
-- a statement trigger replaced by the revision-stamping row trigger, an enqueue-on-insert trigger replaced by the
-- turn_progress trigger, and three functions whose signatures grew a parameter. A database migrated by any version
-- since has none of them. A trigger is dropped only when present: DROP TRIGGER IF EXISTS takes an
-- AccessExclusiveLock on its table even when there is nothing to drop.
do $$ begin
  if exists (select from pg_trigger where tgrelid = 'chat_public.chat_messages'::regclass and tgname = '_200_guard_receipts') then
    drop trigger _200_guard_receipts on chat_public.chat_messages;
  end if;
  if exists (select from pg_trigger where tgrelid = 'chat_public.chat_messages'::regclass and tgname = '_500_fence_history_insert') then
    drop trigger _500_fence_history_insert on chat_public.chat_messages;
  end if;
  if exists (select from pg_trigger where tgrelid = 'chat_public.chats'::regclass and tgname = '_900_enqueue_run_insert') then
    drop trigger _900_enqueue_run_insert on chat_public.chats;
  end if;
end $$;
drop function if exists chat_private.tg_chat_messages__fence_insert();
drop function if exists chat_private.accept_structured_request(uuid, jsonb);
drop function if exists chat_private.commit_step(uuid, uuid, bigint, bigint, jsonb, jsonb);
drop function if exists chat_private.commit_step_and_finish_turn(uuid, uuid, bigint, bigint, jsonb, jsonb, jsonb);
