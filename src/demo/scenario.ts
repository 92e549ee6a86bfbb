// The fleet demo: six jobs, three build-1 workers as real OS processes, and
// the story of the fleet page told against a real database — a claim, a
// heartbeat, a SIGKILL, the recovery pass, a shared gate, and a rolling
// deploy in which build 2 never claims the job only build 1 handles.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient } from '../client/client.js';
import { migrate } from '../db/migrate.js';
import type { JobRecord, LeaseRecord } from '../db/protocol.js';
import { demoJobs, LegacyExport, RebuildTenant, RenderReport } from './jobs.js';
import { renderTable, type DemoRow } from './table.js';

export interface DemoOptions {
  connectionString: string;
  out: (line: string) => void;
  heartbeatMs?: number;
  workMs?: number;
  /** The namespace to tell the story in (default: a new demo-<time> one). */
  namespace?: string;
  /** A pause after each step, so a person watching the dashboard can follow. */
  stepPauseMs?: number;
}

/** How far ahead J6 is scheduled; the story makes it due (run now) at the rolling deploy. */
const J6_HOLD_MS = 3_600_000;

const NOTES: Record<string, string> = { J4: 'key rebuild:acme', J5: 'key rebuild:acme', J6: 'handler in build 1 only' };

/** A namespace of its own for each run. */
export function demoNamespace(): string {
  return `demo-${Date.now().toString(36)}`;
}

function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  return here.replace(/scenario\.(ts|js)$/, 'demoWorker.$1');
}

/**
 * Node's arguments for a worker process: this process's own, plus tsx's
 * loader when the worker is TypeScript and this process got its loader
 * another way (bin/workhorse.js registers tsx through its API in a
 * checkout, which child processes do not inherit).
 */
function workerNodeArgs(script: string): string[] {
  const hasLoader = process.execArgv.some((a) => a.includes('tsx'));
  // tsx as this module resolves it: a bare `tsx` would be looked up from the working directory, outside the checkout when run from elsewhere.
  return script.endsWith('.ts') && !hasLoader ? ['--import', import.meta.resolve('tsx'), ...process.execArgv] : process.execArgv;
}

export async function runDemo(o: DemoOptions): Promise<void> {
  const heartbeatMs = o.heartbeatMs ?? 400;
  const workMs = o.workMs ?? 2500;
  const namespace = o.namespace ?? demoNamespace();
  const stepPauseMs = o.stepPauseMs ?? 0;
  await migrate({ connectionString: o.connectionString });
  const client = createClient({ connectionString: o.connectionString, namespace, jobs: demoJobs, poolMax: 2 });
  const procs = new Map<string, ChildProcess>();
  const labels = new Map<string, string>();

  const startWorker = (workerId: string, build: string) => {
    const args = JSON.stringify({ connectionString: o.connectionString, namespace, workerId, build, heartbeatMs, workMs });
    const script = workerScript();
    // stdin is a pipe the worker watches: it closes however the demo ends (a SIGKILL, a closed stdout), so no worker outlives it.
    const child = spawn(process.execPath, [...workerNodeArgs(script), script, args], { stdio: ['pipe', 'ignore', 'inherit'] });
    procs.set(workerId, child);
  };
  const exited = (workerId: string) =>
    new Promise<void>((resolve) => {
      const p = procs.get(workerId)!;
      if (p.exitCode !== null || p.signalCode !== null) resolve();
      else p.once('exit', () => resolve());
    });

  const snapshot = async (): Promise<{ jobs: JobRecord[]; leases: LeaseRecord[] }> => ({
    jobs: (await client.admin.listJobs({ limit: 100 })).jobs.reverse(),
    leases: await client.admin.listLeases(),
  });
  const show = async (heading: string) => {
    const { jobs, leases } = await snapshot();
    const byJob = new Map(leases.map((l) => [l.jobId, l]));
    const rows: DemoRow[] = jobs.map((j) => {
      const label = labels.get(j.id) ?? j.id;
      const lease = byJob.get(j.id);
      const notes = [NOTES[label], noteFor(j)].filter(Boolean);
      return {
        job: label,
        status: j.status[0]!.toUpperCase() + j.status.slice(1),
        leasedBy: lease?.workerId ?? '·',
        lease: lease ? `${Math.max(0, lease.expiresInMs / 1000).toFixed(1)} s left` : '·',
        execution: String(j.execution),
        note: notes.join('; '),
      };
    });
    o.out(`\n${heading}\n${renderTable(rows)}`);
    if (stepPauseMs > 0) await new Promise((r) => setTimeout(r, stepPauseMs));
  };
  const until = async (what: string, cond: (s: { jobs: JobRecord[]; leases: LeaseRecord[] }) => boolean, timeoutMs = 30_000) => {
    const start = Date.now();
    for (;;) {
      if (cond(await snapshot())) return;
      if (Date.now() - start > timeoutMs) throw new Error(`demo: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const job = (s: { jobs: JobRecord[] }, label: string) => s.jobs.find((j) => labels.get(j.id) === label)!;
  const holder = (s: { leases: LeaseRecord[] }, label: string) =>
    s.leases.find((l) => labels.get(l.jobId) === label)?.workerId;

  try {
    o.out(`workhorse demo — namespace "${namespace}", heartbeat ${heartbeatMs} ms (lease ${heartbeatMs * 4} ms, dead after ${heartbeatMs * 7} ms)`);
    const enq = await client.enqueueMany([
      { job: RenderReport, payload: { label: 'J1' } },
      { job: RenderReport, payload: { label: 'J2' } },
      { job: RenderReport, payload: { label: 'J3' } },
      { job: RebuildTenant, payload: { label: 'J4', tenant: 'acme' }, options: { concurrencyKey: 'rebuild:acme' } },
      { job: RebuildTenant, payload: { label: 'J5', tenant: 'acme' }, options: { concurrencyKey: 'rebuild:acme' } },
      // Scheduled far ahead and made due (run now) only once the build-1
      // workers have left, so no build-1 worker can claim it first however
      // slowly the worker processes start.
      { job: LegacyExport, payload: { label: 'J6' }, options: { delayMs: J6_HOLD_MS } },
    ]);
    enq.forEach((r, i) => labels.set(r.id, `J${i + 1}`));
    const j6 = enq[5]!.id;
    await show('1. Six jobs enqueued (J6 is scheduled: ready, but not due for an hour). No worker yet.');

    for (const id of ['w1', 'w2', 'w3']) startWorker(id, '1');
    await until('three claims', (s) => s.leases.length >= 3);
    await show('2. Claim: three build-1 workers (concurrency 1 each) registered and claimed one job each.');

    await new Promise((r) => setTimeout(r, heartbeatMs * 1.5));
    await show('3. Heartbeat: one statement per worker extends all its leases (each beat sets the time left back to a whole lease; between beats it counts down).');

    const s3 = await snapshot();
    const victim = holder(s3, 'J2') ?? s3.leases[0]!.workerId;
    const victimJob = labels.get(s3.leases.find((l) => l.workerId === victim)!.jobId)!;
    procs.get(victim)!.kill('SIGKILL');
    await exited(victim);
    await show(`4. Kill: ${victim} was SIGKILLed while running ${victimJob}. Its lease is left to run out.`);

    await until('the gate to hold J5 back', (s) => job(s, 'J4').status === 'running' || job(s, 'J5').status === 'running');
    await show('5. Gate: J4 and J5 share rebuild:acme, so only one of them runs at a time, fleet-wide.');

    await until(`recovery of ${victimJob}`, (s) => job(s, victimJob).execution >= 2);
    await show(`6. Recovery: a surviving worker's heartbeat ran the recovery pass; ${victimJob} came back (attempt counted) and was claimed again with a new execution.`);

    // Every build-1 worker still alive drains and leaves (the victim is
    // already gone), so only build 2 is left when J6 comes due.
    const survivors = ['w1', 'w2', 'w3'].filter((id) => id !== victim);
    startWorker('w4', '2');
    startWorker('w5', '2');
    for (const id of survivors) procs.get(id)!.kill('SIGTERM');
    await Promise.all(survivors.map(exited));
    await until('J1-J5 to finish', (s) => ['J1', 'J2', 'J3', 'J4', 'J5'].every((l) => job(s, l).status === 'succeeded'));
    // Run now: J6 comes due and its queue's workers (build 2 only) are woken.
    await client.retry(j6);
    await until('J6 to come due', (s) => job(s, 'J6').runAt.getTime() <= Date.now() - 500);
    await show(`7. Rolling deploy: ${survivors.join(' and ')} drained and left; w4 and w5 run build 2, which has no legacy.export handler. J6 is now due but stays ready: build 2 never claims it.`);

    startWorker('w6', '1');
    await until('J6 to finish', (s) => job(s, 'J6').status === 'succeeded');
    await show('8. A build-1 worker (w6) joined and ran J6. Every job succeeded; nothing was lost.');
  } finally {
    for (const p of procs.values()) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
    await Promise.all([...procs.keys()].map(exited));
    await client.close();
  }
}

function noteFor(j: JobRecord): string {
  const err = j.lastError as { name?: string; worker?: string } | null;
  if (err?.name === 'LeaseExpired' && j.execution >= 1) return `recovered from ${err.worker}`;
  // A ready job whose run_at is ahead is scheduled: no worker claims it yet (the dashboard's "due in").
  if (j.status === 'ready' && j.runAt.getTime() > Date.now()) return `due in ${Math.ceil((j.runAt.getTime() - Date.now()) / 60_000)} min`;
  return '';
}

