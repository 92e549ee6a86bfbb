// The certification harness's own SQL: the tables its handlers record side
// effects in (schema `workhorse_certify`, never part of workhorse's
// migrations), and the auditor's read-only queries over workhorse's own
// ledgers (jobs, leases, attempts, steps) joined with those effects. This is
// an auditor looking at the database directly on purpose; runtime code
// still goes through the protocol module.
import type pg from 'pg';

type Db = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Creates the effect tables (idempotent). No unique keys: duplicates must be visible. */
export async function createHarnessSchema(db: Db): Promise<void> {
  await db.query(`
    create schema if not exists workhorse_certify;
    create table if not exists workhorse_certify.step_effects (
      job_id bigint not null, step text not null, execution bigint not null,
      pid integer not null, at timestamptz not null default clock_timestamp());
    create index if not exists step_effects_job_idx on workhorse_certify.step_effects (job_id, step);
    create table if not exists workhorse_certify.tx_effects (
      job_id bigint not null, step text not null, execution bigint not null,
      pid integer not null, at timestamptz not null default clock_timestamp());
    create index if not exists tx_effects_job_idx on workhorse_certify.tx_effects (job_id, step);`);
}

/** The side effect of a plain step: written on its own, outside any transaction. */
export async function recordStepEffect(db: Db, jobId: string, step: string, execution: number): Promise<void> {
  await db.query('insert into workhorse_certify.step_effects (job_id, step, execution, pid) values ($1, $2, $3, $4)', [
    jobId,
    step,
    execution,
    process.pid,
  ]);
}

/** The database write of a transactional step: `tx` is the step's own transaction. */
export async function recordTxEffect(tx: Db, jobId: string, step: string, execution: number): Promise<void> {
  await tx.query('insert into workhorse_certify.tx_effects (job_id, step, execution, pid) values ($1, $2, $3, $4)', [
    jobId,
    step,
    execution,
    process.pid,
  ]);
}

export interface LedgerFindings {
  byStatus: Record<string, number>;
  totalRows: number;
  leasesLeft: number;
  txDuplicates: number;
  txMissing: number;
  stepReruns: number;
  stepsWithoutEffect: number;
  fence: {
    attemptAheadOfJob: number;
    successNotAtFinalExecution: number;
    doubleSuccess: number;
    stepAheadOfJob: number;
    txEffectOffFence: number;
    stepsOutOfOrder: number;
    attemptsOutOfOrder: number;
  };
  attempts: Record<string, number>;
}

const n = (r: pg.QueryResult<{ n: string | number }>) => Number(r.rows[0]?.n ?? 0);

/** Reads every finding from the ledgers of namespace `ns`. */
export async function auditLedgers(db: Db, ns: string, txStep: string, plainSteps: string[]): Promise<LedgerFindings> {
  const status = await db.query<{ status: string; n: string }>(
    'select status, count(*) as n from workhorse.jobs where namespace = $1 group by status',
    [ns],
  );
  const byStatus = Object.fromEntries(status.rows.map((r) => [r.status, Number(r.n)]));
  const attempts = await db.query<{ outcome: string; n: string }>(
    'select outcome, count(*) as n from workhorse.job_attempts where namespace = $1 group by outcome',
    [ns],
  );
  const q = (sql: string, values: unknown[] = [ns]) => db.query<{ n: string }>(sql, values).then(n);
  return {
    byStatus,
    totalRows: Object.values(byStatus).reduce((a, b) => a + b, 0),
    leasesLeft: await q('select count(*) as n from workhorse.job_runtime where namespace = $1'),
    // A transactional step's write committed more than once.
    txDuplicates: await q(
      `select count(*) as n from (select job_id from workhorse_certify.tx_effects e
          join workhorse.jobs j on j.id = e.job_id and j.namespace = $1
         where e.step = $2 group by e.job_id having count(*) > 1) d`,
      [ns, txStep],
    ),
    // A succeeded job whose transactional step never wrote.
    txMissing: await q(
      `select count(*) as n from workhorse.jobs j
        where j.namespace = $1 and j.status = 'succeeded'
          and not exists (select 1 from workhorse_certify.tx_effects e where e.job_id = j.id and e.step = $2)`,
      [ns, txStep],
    ),
    // A plain step's body ran in an execution later than the one that recorded it.
    stepReruns: await q(
      `select count(*) as n from workhorse_certify.step_effects e
          join workhorse.job_steps s on s.job_id = e.job_id and s.name = e.step
          join workhorse.jobs j on j.id = e.job_id and j.namespace = $1
        where e.execution > s.execution`,
    ),
    // A plain step recorded without its body ever having run (by that execution or an earlier one).
    stepsWithoutEffect: await q(
      `select count(*) as n from workhorse.job_steps s
          join workhorse.jobs j on j.id = s.job_id and j.namespace = $1
        where s.name = any($2::text[])
          and not exists (select 1 from workhorse_certify.step_effects e
                           where e.job_id = s.job_id and e.step = s.name and e.execution <= s.execution)`,
      [ns, plainSteps],
    ),
    fence: {
      attemptAheadOfJob: await q(
        `select count(*) as n from workhorse.job_attempts a join workhorse.jobs j on j.id = a.job_id
          where a.namespace = $1 and a.execution > j.execution`,
      ),
      successNotAtFinalExecution: await q(
        `select count(*) as n from workhorse.job_attempts a join workhorse.jobs j on j.id = a.job_id
          where a.namespace = $1 and a.outcome = 'succeeded' and a.execution <> j.execution`,
      ),
      doubleSuccess: await q(
        `select count(*) as n from (select job_id from workhorse.job_attempts
          where namespace = $1 and outcome = 'succeeded' group by job_id having count(*) > 1) d`,
      ),
      stepAheadOfJob: await q(
        `select count(*) as n from workhorse.job_steps s join workhorse.jobs j on j.id = s.job_id
          where j.namespace = $1 and s.execution > j.execution`,
      ),
      // The transactional write must carry the fence its checkpoint was recorded under.
      txEffectOffFence: await q(
        `select count(*) as n from workhorse_certify.tx_effects e
           join workhorse.job_steps s on s.job_id = e.job_id and s.name = e.step
           join workhorse.jobs j on j.id = e.job_id and j.namespace = $1
          where e.execution <> s.execution`,
      ),
      // Steps run in order: a later step cannot be recorded by an earlier execution.
      stepsOutOfOrder: await q(
        `select count(*) as n from workhorse.job_steps a
           join workhorse.job_steps b on b.job_id = a.job_id and b.created_at > a.created_at
           join workhorse.jobs j on j.id = a.job_id and j.namespace = $1
          where b.execution < a.execution`,
      ),
      // The attempts ledger is written in execution order.
      attemptsOutOfOrder: await q(
        `select count(*) as n from workhorse.job_attempts a
           join workhorse.job_attempts b on b.job_id = a.job_id and b.execution > a.execution
          where a.namespace = $1 and b.finished_at < a.finished_at`,
      ),
    },
    attempts: Object.fromEntries(attempts.rows.map((r) => [r.outcome, Number(r.n)])),
  };
}

/** What the durable mode adds to the audit: every wait, signal and child accounted for. */
export interface DurableFindings {
  /** Parents (certify.steps jobs) that do not have exactly one child. */
  parentsWithoutOneChild: number;
  /** Child jobs whose parent_id is not the parent that spawned them. */
  childrenMislinked: number;
  /** Signals no wait consumed, or consumed by another job than the one they were sent to. */
  signalsAstray: number;
  /** Parents that did not receive exactly one signal. */
  parentsWithoutOneSignal: number;
  /** Waits of finished jobs that never resolved. */
  waitsUnresolved: number;
  /** Sleeps that ended before their wake time. */
  sleepsEndedEarly: number;
  /** Suspensions the attempts ledger counted (a wake-up must not be an attempt): jobs whose attempts exceed their failures + 1. */
  wakeUpsCounted: number;
}

export async function auditDurable(db: Db, ns: string, parentType: string): Promise<DurableFindings> {
  const q = (sql: string, values: unknown[] = [ns]) => db.query<{ n: string }>(sql, values).then(n);
  return {
    parentsWithoutOneChild: await q(
      `select count(*) as n from workhorse.jobs j
        where j.namespace = $1 and j.type = $2
          and (select count(*) from workhorse.job_children c where c.parent_id = j.id) <> 1`,
      [ns, parentType],
    ),
    childrenMislinked: await q(
      `select count(*) as n from workhorse.job_children c join workhorse.jobs k on k.id = c.child_id
        where k.namespace = $1 and k.parent_id is distinct from c.parent_id`,
    ),
    signalsAstray: await q(
      `select count(*) as n from workhorse.job_signals s
        where s.namespace = $1 and (s.consumed_at is null or s.consumed_by is distinct from s.job_id)`,
    ),
    parentsWithoutOneSignal: await q(
      `select count(*) as n from workhorse.jobs j
        where j.namespace = $1 and j.type = $2
          and (select count(*) from workhorse.job_signals s where s.job_id = j.id) <> 1`,
      [ns, parentType],
    ),
    waitsUnresolved: await q(
      `select count(*) as n from workhorse.job_waits w join workhorse.jobs j on j.id = w.job_id
        where w.namespace = $1 and w.resolved_at is null and j.status in ('succeeded', 'failed', 'cancelled')`,
    ),
    sleepsEndedEarly: await q(
      `select count(*) as n from workhorse.job_waits w
        where w.namespace = $1 and w.kind = 'sleep' and w.resolved_at < w.wake_at`,
    ),
    // Every counted attempt after the first is a failure or a recovery in the ledger.
    wakeUpsCounted: await q(
      `select count(*) as n from workhorse.jobs j
        where j.namespace = $1 and j.status = 'succeeded'
          and j.attempt > 1 + (select count(*) from workhorse.job_attempts a
                                where a.job_id = j.id and a.outcome in ('retried', 'recovered'))`,
    ),
  };
}
