// The Schedules view: the namespace's recurring slots (sys.* included) —
// cadence (cron with its time zone, or a fixed interval), the job each
// cadence enqueues, enabled or not (and whether an app declares it: then
// only builds that still declare it fire it), the next fire and the last one.
import type { ScheduleRecord } from '../../../schedules/schedules.js';
import type { SchedulesData } from '../data/fleetData.js';
import { duration, relative, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { Page } from '../layout.js';
import { badge, notice, table } from './common.js';

const HEADERS = [{ label: 'schedule' }, { label: 'group' }, { label: 'cadence' }, { label: 'job' }, { label: 'state' }, { label: 'next fire' }, { label: 'last fire' }];

function cadence(s: ScheduleRecord): string {
  if (s.cron) return `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ' (UTC)'}`;
  return s.intervalMs === null ? '·' : `every ${duration(s.intervalMs)}`;
}

function row(s: ScheduleRecord, nowMs: number): Html {
  const job = s.job as { type?: unknown; queue?: unknown };
  const when = (d: Date | null) => (d ? html`${time(d)}<br><span class="muted small">${relative(d, nowMs)}</span>` : '·');
  return html`<tr data-schedule="${s.name}"><td><code>${s.name}</code></td><td>${s.scheduleNamespace}</td><td>${cadence(s)}</td><td>${String(job.type ?? '·')} <span class="muted small">on ${String(job.queue ?? 'default')}</span></td><td>${s.enabled ? badge('enabled', 'active') : badge('disabled', 'dead')}${s.declared ? html`<br><span class="muted small" title="stored by an app's start: fired only by builds that declare it">declared by the app</span>` : ''}</td><td>${s.enabled ? when(s.nextRunAt) : '·'}</td><td>${when(s.lastFiredAt)}</td></tr>`;
}

export function schedulesView(d: SchedulesData): Page {
  return {
    title: 'Schedules',
    nav: '/ui/schedules',
    liveMs: 5000,
    head: html`<h1>Schedules</h1><p class="lede">Recurring slots: each fires once per cadence, run by whichever worker claims it.</p>${notice(d.query.done, d.query.subject)}`,
    live: d.schedules.length
      ? table(HEADERS, d.schedules.map((s) => row(s, d.nowMs)), 'Recurring schedules')
      : html`<p id="schedules-empty">No schedule is defined in this namespace.</p>`,
  };
}
