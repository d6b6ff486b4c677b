-- Up Migration
-- allowed is derived from to_state (a transition is allowed exactly where it leads somewhere) instead of being kept
-- in step with it by a CHECK: a generated column, so no rule can be written with the two disagreeing and no writer
-- has to state both. Readers keep the column and its meaning.
alter table chat_private.transition_rules drop constraint transition_rules_to_state;
alter table chat_private.transition_rules drop column allowed;
alter table chat_private.transition_rules
  add column allowed boolean not null generated always as (cardinality(to_state) > 0) stored,
  add constraint transition_rules_to_state
    check (to_state <@ array['waiting', 'running', 'interrupting', 'requires_action', 'error', 'archived']);
comment on column chat_private.transition_rules.allowed is
  E'Whether the transition may run from from_state: derived, true exactly when to_state is not empty.';
-- The new column rewrote the table and reset its statistics: without them the planner reads the whole table for
-- each rule lookup (chat_private._transition_rule) instead of its primary key.
analyze chat_private.transition_rules;
