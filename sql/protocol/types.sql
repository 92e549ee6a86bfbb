-- types: what a claim hands to a worker. Times travel as epoch
-- milliseconds: the driver turns a number into a Date far more cheaply than
-- it parses a timestamp's text, which mattered at thousands of claimed jobs
-- a second.
create type workhorse.claimed_job as (
  id              bigint,
  queue           text,
  type            text,
  payload         jsonb,
  priority        integer,
  run_at_ms       double precision,
  attempt         integer,
  max_attempts    integer,
  execution       bigint,
  timeout_ms      integer,
  concurrency_key text,
  progress        jsonb,
  created_at_ms   double precision,
  expires_at_ms   double precision,
  trace_context   jsonb
);
comment on type workhorse.claimed_job is
  'One claimed job as claim_many_v1 returns it, in this column order; *_ms columns are epoch milliseconds; execution (the job''s last execution + 1, above the lease epoch''s floor) is the fence every later write must carry; trace_context is the W3C trace context of the span that enqueued the job (null when none).';
