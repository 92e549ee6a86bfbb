-- 002_protocol: once the protocol functions; they now live in protocol/,
-- one file per lifecycle stage, re-applied whenever they change. The number
-- stays so every database's history reads the same.
insert into workhorse.migrations (version, name) values (2, 'protocol') on conflict (version) do nothing;
