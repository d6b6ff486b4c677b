-- Up Migration
-- `chatd ops`, `chatd batch` and `chatd token` work as chat_operator (src/cli/operator-session.ts) instead of the
-- owner. Submitting a batch for, or minting a token for, a user that does not exist yet creates it: chat_operator
-- may insert a user's name (id and created_at take their defaults), and change nothing else of a user.
grant insert (name) on chat_public.users to chat_operator;
create policy insert_operator on chat_public.users for insert to chat_operator with check (true);
-- As for chat_worker (0033): a managed database's owner (CREATEROLE, no superuser) runs these commands with its own
-- login, which must be a member of chat_operator to take the role.
do $$
begin
  if not (select rolsuper from pg_catalog.pg_roles where rolname = current_user)
     and not pg_catalog.pg_has_role(current_user, 'chat_operator', 'MEMBER') then
    execute pg_catalog.format('grant chat_operator to %I', current_user);
  end if;
end
$$;
