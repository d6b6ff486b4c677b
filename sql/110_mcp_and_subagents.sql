-- MCP server selection and subagents (child chats).
--
-- Subagents: a parent chat's runner creates and drives child chats through these chat_private functions. Each one
-- first checks that the caller still holds the parent's lease (a stale runner gets CHFNC and changes nothing), then
-- reuses the client transitions (create_chat_as, send_chat_message, interrupt_chat) so a child follows exactly the
-- rules of any chat. A child never receives a response format: its parent's structured request is the parent's
-- obligation, and child chats refuse structured requests anyway (RFCHD). Depth is 1: a child cannot spawn (AGDEP).

create or replace function chat_private.check_agent_runner(p_parent uuid, p_runner uuid) returns chat_public.chats as $$
declare
  v_parent chat_public.chats;
begin
  select * into v_parent from chat_public.chats where id = p_parent;
  if not found then
    raise exception 'chat not found' using errcode = 'CHNTF';
  end if;
  if not chat_private._lease_is_live(p_parent, p_runner) then
    raise exception 'the runner no longer holds the parent chat''s lease' using errcode = 'CHFNC';
  end if;
  return v_parent;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.check_agent_runner(uuid, uuid)', '{}');

-- Creates a child chat of p_parent whose first message is p_content. The child gets the parent's owner, model
-- config, workspace, plan mode and MCP servers, no dynamic tools (nobody would answer them) and no response format.
-- p_key (the parent's tool call) makes a re-run of the same spawn call after a crash return the same child.
create or replace function chat_private.spawn_child_chat(
  p_parent uuid, p_runner uuid, p_content jsonb, p_title text, p_key text
) returns uuid as $$
declare
  v_parent chat_public.chats;
  v_result chat_public.chat_input_result;
begin
  v_parent := chat_private.check_agent_runner(p_parent, p_runner);
  if v_parent.parent_chat_id is not null then
    raise exception 'a child chat cannot spawn agents (depth 1)' using errcode = 'AGDEP';
  end if;
  if (select count(*) from chat_public.chats c where c.parent_chat_id = p_parent) >= 32
     and not exists (select 1 from chat_private.idempotency_keys k where k.owner_id = v_parent.owner_id and k.key = p_key) then
    raise exception 'a chat has at most 32 agents' using errcode = 'AGLIM';
  end if;
  v_result := chat_private.create_chat_as(v_parent.owner_id, p_content, null, v_parent.model_config_id,
    coalesce(p_title, 'agent'), v_parent.workspace, '[]', v_parent.plan_mode, p_key, false);
  update chat_public.chats c set parent_chat_id = p_parent, mcp_server_ids = v_parent.mcp_server_ids
  where c.id = v_result.chat_id and c.parent_chat_id is null;
  return v_result.chat_id;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_private.spawn_child_chat(uuid, uuid, jsonb, text, text) is
  E'Subagents: creates a child chat (depth 1) for the runner holding the parent''s lease. The child never inherits a response format.';
select chat_private.grant_execute('chat_private.spawn_child_chat(uuid, uuid, jsonb, text, text)', '{chat_worker}');

-- The child of p_parent, or CHNTF: a runner drives only its own chat's children.
create or replace function chat_private.agent_child(p_parent uuid, p_child uuid) returns chat_public.chats as $$
declare
  v_child chat_public.chats;
begin
  select * into v_child from chat_public.chats c where c.id = p_child and c.parent_chat_id = p_parent;
  if not found then
    raise exception 'agent not found' using errcode = 'CHNTF', column = 'agent_id';
  end if;
  return v_child;
end;
$$ language plpgsql stable security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.agent_child(uuid, uuid)', '{}');

-- Sends into a child with the owner's identity, so send semantics (start, queue, interrupt) are the client's.
create or replace function chat_private.agent_send(
  p_parent uuid, p_runner uuid, p_child uuid, p_content jsonb, p_interrupt boolean
) returns chat_public.chat_input_result as $$
declare
  v_child chat_public.chats;
  v_claim text := current_setting('jwt.claims.sub', true);
  v_result chat_public.chat_input_result;
begin
  perform chat_private.check_agent_runner(p_parent, p_runner);
  v_child := chat_private.agent_child(p_parent, p_child);
  perform set_config('jwt.claims.sub', v_child.owner_id::text, true);
  v_result := chat_public.send_chat_message(p_child, p_content, null,
    case when p_interrupt then 'interrupt' else 'queue' end, null);
  perform set_config('jwt.claims.sub', coalesce(v_claim, ''), true);
  return v_result;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.agent_send(uuid, uuid, uuid, jsonb, boolean)', '{chat_worker}');

create or replace function chat_private.agent_interrupt(p_parent uuid, p_runner uuid, p_child uuid) returns text as $$
declare
  v_child chat_public.chats;
  v_claim text := current_setting('jwt.claims.sub', true);
begin
  perform chat_private.check_agent_runner(p_parent, p_runner);
  v_child := chat_private.agent_child(p_parent, p_child);
  perform set_config('jwt.claims.sub', v_child.owner_id::text, true);
  v_child := chat_public.interrupt_chat(p_child);
  perform set_config('jwt.claims.sub', coalesce(v_claim, ''), true);
  return v_child.status::text;
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
select chat_private.grant_execute('chat_private.agent_interrupt(uuid, uuid, uuid)', '{chat_worker}');

-- MCP: a chat selects operator-configured servers by id. The selection applies from the chat's next run (a run
-- lists the servers' tools once, when it starts).
create or replace function chat_public.set_chat_mcp_servers(chat_id uuid, server_ids text[]) returns chat_public.chats as $$
declare
  v_user uuid := chat_private.require_user();
  v_ids text[] := coalesce(server_ids, '{}');
  v_unknown text;
begin
  if cardinality(v_ids) > 16 or (select count(distinct i) from unnest(v_ids) i) <> cardinality(v_ids) then
    raise exception 'server_ids holds at most 16 distinct ids' using errcode = 'CIINV', column = 'server_ids';
  end if;
  perform chat_private._begin_transition(set_chat_mcp_servers.chat_id, 'set_mcp_servers', v_user);
  select i into v_unknown from unnest(v_ids) i
  where not exists (select 1 from chat_private.mcp_servers s where s.id = i and s.enabled) limit 1;
  if v_unknown is not null then
    raise exception 'unknown or disabled MCP server: %', v_unknown using errcode = 'CIINV', column = 'server_ids';
  end if;
  update chat_public.chats c set mcp_server_ids = v_ids where c.id = set_chat_mcp_servers.chat_id;
  perform chat_private.notify_chat(set_chat_mcp_servers.chat_id, 'status');
  return (select c from chat_public.chats c where c.id = set_chat_mcp_servers.chat_id);
end;
$$ language plpgsql volatile security definer set search_path to pg_catalog, public, pg_temp;
comment on function chat_public.set_chat_mcp_servers(uuid, text[]) is
  E'Selects the operator-configured MCP servers whose tools the chat is offered (from its next run). Unknown or disabled ids are refused.';
select chat_private.grant_execute('chat_public.set_chat_mcp_servers(uuid, text[])', '{chat_anonymous, chat_user}');
comment on column chat_public.chats.mcp_server_ids is E'The MCP servers this chat uses (ids of operator-configured servers).';


comment on table chat_private.mcp_servers is
  E'Operator-configured MCP servers (stdio: command + args; http: streamable-HTTP url). Tools are offered as mcp__<id>__<tool>.';
comment on table chat_private.mcp_server_secrets is E'Environment (stdio) and headers (http) for MCP servers; not readable by chat_operator.';
