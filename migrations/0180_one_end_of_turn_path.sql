-- Up Migration
-- Ending a turn is one path in two halves (sql/050: _end_turn sets the end state, _promote_after_turn closes the turn
-- and promotes the queue head), used by finish_turn, finish_interruption and operator_cancel_request alike; the
-- function that did both for the last two goes. A fresh database never had it (sql/ is applied after migrations).
drop function if exists chat_private._end_turn_and_promote(uuid, text, text);
