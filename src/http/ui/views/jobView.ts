// The Job view: one job as the database holds it — its facts and live
// lease, then its sections: payload, result or last error, progress, the
// attempts ledger and the recorded steps. Sections are descriptors shown
// when the job has their data; a durable wait's "waits for", its children
// and a trace id join the list once the schema stores them. Cancel and
// retry are buttons for viewers holding `admin`, each the client's own
// cancel() or retry().
import type { AttemptRecord, StepRecord } from '../../../db/dashboard.js';
import type { JobData } from '../data/jobData.js';
import { duration, prettyJson, relative, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { Page } from '../layout.js';
import type { Viewer } from '../uiEnv.js';
import { actionButton, badge, notice, table } from './common.js';

interface Section {
  id: string;
  title: string;
  shown(d: JobData): boolean;
  body(d: JobData): Html;
}

function jsonBlock(value: unknown, label: string): Html {
  const { text, cut } = prettyJson(value);
  return html`<pre tabindex="0" aria-label="${label}">${text}</pre>${cut ? html`<p class="muted small">Cut at 32 KiB; GET /jobs/:id returns all of it.</p>` : ''}`;
}

function errorText(e: unknown): string {
  if (e && typeof e === 'object' && 'message' in e) {
    const x = e as { name?: unknown; message?: unknown };
    return `${typeof x.name === 'string' ? `${x.name}: ` : ''}${String(x.message)}`;
  }
  return e === null || e === undefined ? '' : JSON.stringify(e);
}

function attemptRow(a: AttemptRecord): Html {
  const err = errorText(a.error);
  return html`<tr><td class="num">${a.execution}</td><td class="num">${a.attempt}</td><td>${a.workerId ?? '·'}</td><td>${badge(a.outcome, a.outcome === 'succeeded' ? 'succeeded' : a.outcome === 'failed' ? 'failed' : 'cancelled')}</td><td>${time(a.startedAt)}</td><td>${time(a.finishedAt)}</td><td class="num">${a.durationMs === null ? '·' : duration(a.durationMs)}</td><td>${err ? html`<details id="attempt-${a.execution}-error"><summary>${err.slice(0, 80)}</summary>${jsonBlock(a.error, `error of execution ${a.execution}`)}</details>` : ''}</td></tr>`;
}

function stepRow(s: StepRecord): Html {
  return html`<tr><td><code>${s.name}</code></td><td class="num">${s.execution}</td><td>${time(s.createdAt)}</td><td><details id="step-${encodeURIComponent(s.name)}"><summary>result</summary>${jsonBlock(s.result, `result of step ${s.name}`)}</details></td></tr>`;
}

export const JOB_SECTIONS: readonly Section[] = [
  { id: 'payload', title: 'Payload', shown: () => true, body: (d) => jsonBlock(d.job.payload, 'payload') },
  { id: 'result', title: 'Result', shown: (d) => d.job.status === 'succeeded', body: (d) => jsonBlock(d.job.result, 'result') },
  { id: 'error', title: 'Last error', shown: (d) => d.job.lastError !== null && d.job.lastError !== undefined, body: (d) => jsonBlock(d.job.lastError, 'last error') },
  { id: 'progress', title: 'Progress', shown: (d) => d.job.progress !== null && d.job.progress !== undefined, body: (d) => jsonBlock(d.job.progress, 'progress') },
  {
    id: 'attempts',
    title: 'Attempts ledger',
    shown: () => true,
    body: (d) =>
      d.attempts.length
        ? table(
            [{ label: 'execution', num: true }, { label: 'attempt', num: true }, { label: 'worker' }, { label: 'outcome' }, { label: 'started' }, { label: 'finished' }, { label: 'took', num: true }, { label: 'error' }],
            d.attempts.map(attemptRow),
            'Attempts of this job',
          )
        : html`<p class="muted">No attempt has settled yet: the ledger gets a row when an execution succeeds, fails, retries, is recovered or cancelled.</p>`,
  },
  {
    id: 'steps',
    title: 'Recorded steps',
    shown: () => true,
    body: (d) =>
      d.steps.length
        ? table([{ label: 'step' }, { label: 'execution', num: true }, { label: 'recorded' }, { label: 'result' }], d.steps.map(stepRow), 'Recorded steps of this job')
        : html`<p class="muted">No step recorded (ctx.step and ctx.txStep record here).</p>`,
  },
];

function facts(d: JobData): Html {
  const j = d.job;
  const lease = d.lease
    ? html`<b>${d.lease.workerId}</b>, execution ${d.lease.execution}, ${d.lease.expiresInMs >= 0 ? `${duration(d.lease.expiresInMs)} left` : `expired ${duration(-d.lease.expiresInMs)} ago`}${d.lease.started ? '' : ' (claimed, not started yet)'}`
    : '·';
  const row = (k: string, v: Html | string | number) => html`<dt>${k}</dt><dd>${v}</dd>`;
  return html`<dl class="facts">${[
    row('status', badge(j.status)),
    row('queue', j.queue),
    row('attempt', `${j.attempt} of ${j.maxAttempts}`),
    row('execution', j.execution),
    row('leased by', lease),
    row('priority', j.priority),
    row('run at', html`${time(j.runAt)} <span class="muted small">(${relative(j.runAt, d.nowMs)})</span>`),
    row('created', time(j.createdAt)),
    row('started', time(j.startedAt)),
    row('finished', time(j.finishedAt)),
    row('concurrency key', j.concurrencyKey ?? '·'),
    row('dedupe key', j.dedupeKey ?? '·'),
    row('timeout', j.timeoutMs === null ? '·' : duration(j.timeoutMs)),
    row('backoff', `${j.backoff.kind}, ${duration(j.backoff.baseMs)} to ${duration(j.backoff.maxMs)}`),
  ]}</dl>`;
}

function actions(d: JobData, viewer: Viewer | null): Html {
  const j = d.job;
  const ended = j.status === 'succeeded' || j.status === 'failed' || j.status === 'cancelled';
  const retryable = j.status === 'failed' || j.status === 'cancelled' || (j.status === 'ready' && j.runAt.getTime() > d.nowMs);
  const target = `job #${j.id}`;
  return html`<div class="actions">${[
    retryable ? actionButton(viewer, { action: `/ui/jobs/${j.id}/retry`, label: j.status === 'ready' ? 'Run now' : 'Retry', target, id: 'job-retry' }) : '',
    ended ? '' : actionButton(viewer, { action: `/ui/jobs/${j.id}/cancel`, label: 'Cancel', target, id: 'job-cancel', danger: true }),
  ]}</div>`;
}

export function jobView(d: JobData, viewer: Viewer | null): Page {
  const sections = JOB_SECTIONS.filter((s) => s.shown(d)).map((s) => html`<section aria-labelledby="sec-${s.id}"><h2 id="sec-${s.id}">${s.title}</h2>${s.body(d)}</section>`);
  return {
    title: `Job #${d.job.id}`,
    nav: '/ui',
    liveMs: 2000,
    head: html`<p class="small"><a href="/ui">← Namespace</a></p><h1>Job #${d.job.id} <span class="muted">${d.job.type}</span></h1>${notice(d.query.done, d.query.subject)}`,
    live: html`${actions(d, viewer)}${facts(d)}${sections}`,
  };
}
