-- Up Migration
-- A receipt reads its request's turns (chat_private._receipt_provenance) by structured_output_request_id. Without an
-- index that read scans every turn ever run, so a receipt cost grew with the table: the largest item of a turn's
-- PostgreSQL time in bench:e2e's profile, and the reason the cost per turn rose with the number of turns in flight.
create index if not exists turn_progress_request on chat_private.turn_progress (structured_output_request_id);

