-- Up Migration
-- The target state of each transition is data: to_state lists the states the chat can be in after the transition
-- from from_state, the usual one first (an argument or the queue decides between several: send_message with
-- busy_behavior interrupt, finish_turn with a queued message); it is empty exactly when the transition is refused
-- there. The prose outcome becomes note, kept for what no column says (CHARC or CHTRN follow from the state).
-- `archived` stands for an archived chat whatever its status, as in from_state.
alter table chat_private.transition_rules rename column outcome to note;
alter table chat_private.transition_rules add column to_state text[] not null default '{}';
update chat_private.transition_rules r set to_state = v.to_state::text[]
from (values
  ('send_message', 'waiting', '{running}'),
  ('send_message', 'running', '{running,interrupting}'),
  ('send_message', 'interrupting', '{interrupting}'),
  ('send_message', 'requires_action', '{requires_action,running}'),
  ('send_message', 'error', '{running}'),
  ('edit_message', 'waiting', '{running}'),
  ('edit_message', 'running', '{running}'),
  ('edit_message', 'interrupting', '{running}'),
  ('edit_message', 'requires_action', '{running}'),
  ('edit_message', 'error', '{running}'),
  ('delete_queued_message', 'waiting', '{waiting}'),
  ('delete_queued_message', 'running', '{running}'),
  ('delete_queued_message', 'interrupting', '{interrupting}'),
  ('delete_queued_message', 'requires_action', '{requires_action}'),
  ('delete_queued_message', 'error', '{error}'),
  ('promote_queued_message', 'waiting', '{running}'),
  ('promote_queued_message', 'running', '{interrupting}'),
  ('promote_queued_message', 'interrupting', '{interrupting}'),
  ('promote_queued_message', 'requires_action', '{running}'),
  ('promote_queued_message', 'error', '{running}'),
  ('interrupt', 'waiting', '{waiting}'),
  ('interrupt', 'running', '{interrupting}'),
  ('interrupt', 'interrupting', '{interrupting}'),
  ('interrupt', 'requires_action', '{running}'),
  ('interrupt', 'error', '{error}'),
  ('submit_tool_results', 'requires_action', '{running}'),
  ('archive', 'waiting', '{archived}'),
  ('archive', 'error', '{archived}'),
  ('archive', 'archived', '{archived}'),
  ('unarchive', 'waiting', '{waiting}'),
  ('unarchive', 'running', '{running}'),
  ('unarchive', 'interrupting', '{interrupting}'),
  ('unarchive', 'requires_action', '{requires_action}'),
  ('unarchive', 'error', '{error}'),
  ('unarchive', 'archived', '{waiting,error}'),
  ('set_plan_mode', 'waiting', '{waiting}'),
  ('set_plan_mode', 'running', '{running}'),
  ('set_plan_mode', 'interrupting', '{interrupting}'),
  ('set_plan_mode', 'requires_action', '{requires_action}'),
  ('set_plan_mode', 'error', '{error}'),
  ('acquire_lease', 'running', '{running}'),
  ('acquire_lease', 'interrupting', '{interrupting}'),
  ('commit_step', 'running', '{running}'),
  ('enter_requires_action', 'running', '{requires_action}'),
  ('finish_turn', 'running', '{waiting,running}'),
  ('finish_error', 'running', '{error}'),
  ('finish_error', 'interrupting', '{error}'),
  ('finish_interruption', 'interrupting', '{waiting,running}'),
  ('cancel_requires_action', 'requires_action', '{running,requires_action}'),
  ('record_retry_state', 'running', '{running}'),
  ('operator_release_lease', 'running', '{running}'),
  ('operator_release_lease', 'interrupting', '{interrupting}'),
  ('operator_cancel_request', 'waiting', '{waiting}'),
  ('operator_cancel_request', 'running', '{running,interrupting}'),
  ('operator_cancel_request', 'interrupting', '{interrupting}'),
  ('operator_cancel_request', 'requires_action', '{requires_action,waiting,running}'),
  ('operator_cancel_request', 'error', '{error}'),
  ('operator_cancel_request', 'archived', '{archived}'),
  ('operator_retry_chat', 'error', '{running}'),
  ('compact_chat', 'waiting', '{waiting}'),
  ('compact_chat', 'running', '{running}'),
  ('compact_chat', 'requires_action', '{requires_action}'),
  ('compact_chat', 'error', '{error}'),
  ('compact_history', 'running', '{running}'),
  ('set_mcp_servers', 'waiting', '{waiting}'),
  ('set_mcp_servers', 'running', '{running}'),
  ('set_mcp_servers', 'interrupting', '{interrupting}'),
  ('set_mcp_servers', 'requires_action', '{requires_action}'),
  ('set_mcp_servers', 'error', '{error}')
) v(transition, from_state, to_state)
where r.transition = v.transition and r.from_state = v.from_state;
alter table chat_private.transition_rules alter column to_state drop default,
  add constraint transition_rules_to_state check (
    to_state <@ array['waiting', 'running', 'interrupting', 'requires_action', 'error', 'archived']
    and allowed = (cardinality(to_state) > 0));
comment on column chat_private.transition_rules.to_state is
  E'The states the chat can be in after the transition, the usual one first; empty when it is refused.';
comment on column chat_private.transition_rules.note is E'What the transition does from this state, in words.';
