-- 007_tick_skips: the tick's claim rule for jobs without a timeout
-- (fits_tick_v1) and the count of what a tick skips (tick_skips_v1,
-- tick_start_v2), in protocol/claim.sql and protocol/tick.sql. No table
-- changes: the number marks the protocol version clients check.
insert into workhorse.migrations (version, name) values (7, 'tick_skips') on conflict (version) do nothing;
