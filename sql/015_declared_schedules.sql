-- 015_declared_schedules: which slots an app declares. A slot stored by a
-- declarative sync (a tick's start, a ScheduleRunner's start: the app's
-- `schedules` and the sys.* slots its firer carries) is `declared`, and
-- fires only from a firer whose build still declares it (claim_slots_v2,
-- tick_start_v2), so a schedule removed from the app stops firing once no
-- running build has it. A slot stored by `schedules.define()` is not
-- declared and fires from any firer of its schedule namespace, as before.
-- Rows stored before this migration are not declared until a build that
-- declares them starts.
alter table workhorse.schedules add column declared boolean not null default false;

insert into workhorse.migrations (version, name) values (15, 'declared_schedules') on conflict (version) do nothing;
