-- 020_slot_runs: dashboard_slot_run_v1 (protocol/dashboard.sql) tells the
-- Alerts view whether the sys.alerts jobs run, not only whether the slot
-- fires, and evaluate_alerts_v2 (protocol/alerts.sql) publishes the alerts'
-- openings and resolutions only when the evaluator has outbox sinks to
-- deliver them (without, they piled up pending for good). No table
-- changes; the number marks the protocol a client of this version needs.

insert into workhorse.migrations (version, name) values (20, 'slot_runs') on conflict (version) do nothing;
