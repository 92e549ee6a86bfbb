// Renders a certification report as the table the issue asks for, with
// the run's shape above it and every violation spelled out below it.
import { expectedJobs, type CertifyReport } from './run.js';

const int = (n: number) => n.toLocaleString('en-US');
const ok = (n: number) => (n === 0 ? 'ok' : 'VIOLATION');

export function renderReport(r: CertifyReport): string {
  const o = r.options;
  const rows: [string, string, string][] = [
    ['jobs finished', `${int(r.finished)} / ${int(expectedJobs(o))}`, r.finished === expectedJobs(o) ? 'ok' : 'VIOLATION'],
    ['jobs lost', int(r.lost), r.lost === 0 ? 'ok' : 'VIOLATION'],
    ['jobs ended failed', int(r.failed), r.failed === 0 ? 'ok' : 'VIOLATION'],
    ['duplicate transactional step effects', int(r.txDuplicates), r.txDuplicates === 0 ? 'ok' : 'VIOLATION'],
    ['missing transactional step effects', int(r.txMissing), r.txMissing === 0 ? 'ok' : 'VIOLATION'],
    ['recorded steps that ran again', int(r.stepReruns), r.stepReruns === 0 ? 'ok' : 'VIOLATION'],
    ['steps recorded without running', int(r.stepsWithoutEffect), r.stepsWithoutEffect === 0 ? 'ok' : 'VIOLATION'],
    ['fence regressions', int(r.fenceRegressions), r.fenceRegressions === 0 ? 'ok' : 'VIOLATION'],
    ['leases left', int(r.leasesLeft), r.leasesLeft === 0 ? 'ok' : 'VIOLATION'],
    ['worker processes that died unkilled', int(r.processesCrashed), r.processesCrashed === 0 ? 'ok' : 'VIOLATION'],
    ...(r.durable
      ? ([
          ['signals sent by the harness', `${int(r.durable.signalsSent)} / ${int(o.jobs)}`, r.durable.signalsSent === o.jobs ? 'ok' : 'VIOLATION'],
          ['parents without exactly one child', int(r.durable.parentsWithoutOneChild), ok(r.durable.parentsWithoutOneChild)],
          ['children linked to the wrong parent', int(r.durable.childrenMislinked), ok(r.durable.childrenMislinked)],
          ['signals astray (unconsumed or to another job)', int(r.durable.signalsAstray), ok(r.durable.signalsAstray)],
          ['parents without exactly one signal', int(r.durable.parentsWithoutOneSignal), ok(r.durable.parentsWithoutOneSignal)],
          ['waits of finished jobs unresolved', int(r.durable.waitsUnresolved), ok(r.durable.waitsUnresolved)],
          ['sleeps that ended early', int(r.durable.sleepsEndedEarly), ok(r.durable.sleepsEndedEarly)],
          ['wake-ups counted as attempts', int(r.durable.wakeUpsCounted), ok(r.durable.wakeUpsCounted)],
        ] as [string, string, string][])
      : []),
    ['workers killed (SIGKILL)', int(r.workersKilled), ''],
    ...(o.faults
      ? ([
          ['database restarts', int(r.databaseRestarts), ''],
          ['backend terminations (all backends)', int(r.backendTerminations), ''],
        ] as [string, string, string][])
      : []),
    ['attempts recovered', int(r.attemptsRecovered), ''],
    ['attempts retried', int(r.attemptsRetried), ''],
    ['wall time', `${(r.wallMs / 1000).toFixed(1)} s`, ''],
  ];
  const w0 = Math.max(...rows.map((x) => x[0].length));
  const w1 = Math.max(...rows.map((x) => x[1].length));
  const lines = [
    `workhorse certify: ${o.mode} mode, ${o.workers} ${o.mode === 'tick' ? 'tick processes' : 'workers'} x ${o.executors} executors, ` +
      `a SIGKILL every ${o.killEveryMs} ms, ${int(o.jobs)} jobs x ${o.steps} steps, heartbeat ${o.heartbeatMs} ms` +
      (o.mode === 'tick' ? `, ticks of ${o.tickMs} ms` : '') +
      (o.faults ? `, a database fault every ${o.faultEveryMs} ms` : '') +
      (o.durable ? ', durable (each job sleeps, waits for a harness signal, spawns and joins a child)' : ''),
    '',
    ...rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`.trimEnd()),
  ];
  lines.push('', r.violations.length === 0 ? 'CERTIFIED: every guarantee held' : 'FAILED:');
  for (const v of r.violations) lines.push(`  - ${v}`);
  return lines.join('\n');
}
