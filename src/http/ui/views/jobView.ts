// The Job view: one job as the database holds it — its facts and live
// lease, then its sections: payload, result or last error, progress, the
// attempts ledger, the recorded steps, what a waiting job waits for (kind,
// name, since, wake time or timeout, key, a decision's prompt and choices)
// and its parent and children. Sections are descriptors shown when the job
// has their data; a trace id joins the list once the schema stores it.
// Cancel and retry are buttons for viewers holding `admin`, each the
// client's own cancel() or retry().
import type { AttemptRecord, FamilyMember, StepRecord } from '../../../db/dashboard.js';
import type { JobStatus, WaitRecord } from '../../../db/protocol.js';
import { dueNever } from '../../../db/protocol/waits.js';
import { CHILDREN_SHOWN, type JobData } from '../data/jobData.js';
import { duration, prettyJson, relative, time } from '../format.js';
import { html, join, type Html } from '../html.js';
import type { Page } from '../layout.js';
import type { Viewer } from '../uiEnv.js';
import { actionButton, badge, notice, shortLine, table } from './common.js';

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

/**
 * An error as stored (errorJson.ts): its message as the text it is
 * (wrapped, its line breaks kept), its other fields as JSON, and its stack,
 * when it has one, as the lines it is. Inside the JSON each was one long
 * string of `\n` escapes and quoted quotes running off to the right.
 */
function errorBlock(value: unknown, label: string): Html {
  if (!value || typeof value !== 'object') return jsonBlock(value, label);
  const { stack, message, ...fields } = value as Record<string, unknown>;
  const text = typeof message === 'string' ? html`<pre class="message" tabindex="0" aria-label="${label}: message">${message}</pre>` : '';
  const rest = typeof message === 'string' ? fields : { message, ...fields };
  if (typeof stack !== 'string') return html`${text}${jsonBlock(rest, label)}`;
  const shown = stack.length > MAX_STACK_CHARS ? `${stack.slice(0, MAX_STACK_CHARS)}\n…` : stack;
  return html`${text}${jsonBlock(rest, label)}<pre class="stack" tabindex="0" aria-label="${label}: stack">${shown}</pre>`;
}

/** A stack longer than this is cut (the whole error is in GET /jobs/:id). */
const MAX_STACK_CHARS = 16 * 1024;

function errorText(e: unknown): string {
  if (e && typeof e === 'object' && 'message' in e) {
    const x = e as { name?: unknown; message?: unknown };
    return `${typeof x.name === 'string' ? `${x.name}: ` : ''}${String(x.message)}`;
  }
  return e === null || e === undefined ? '' : JSON.stringify(e);
}

function attemptRow(a: AttemptRecord): Html {
  const err = errorText(a.error);
  return html`<tr><td class="num">${a.execution}</td><td class="num">${a.attempt}</td><td>${a.workerId ?? '·'}</td><td>${badge(a.outcome, a.outcome === 'succeeded' ? 'succeeded' : a.outcome === 'failed' ? 'failed' : 'cancelled')}</td><td>${time(a.startedAt)}</td><td>${time(a.finishedAt)}</td><td class="num">${a.durationMs === null ? '·' : duration(a.durationMs)}</td><td>${err ? html`<details id="attempt-${a.execution}-error"><summary>${shortLine(err, 80)}</summary>${errorBlock(a.error, `error of execution ${a.execution}`)}</details>` : ''}</td></tr>`;
}

function stepRow(s: StepRecord): Html {
  return html`<tr><td><code>${s.name}</code></td><td class="num">${s.execution}</td><td>${time(s.createdAt)}</td><td><details id="step-${encodeURIComponent(s.name)}"><summary>result</summary>${jsonBlock(s.result, `result of step ${s.name}`)}</details></td></tr>`;
}

const WAIT_KINDS: Record<WaitRecord['kind'], string> = {
  sleep: 'sleeping',
  signal: 'a signal',
  decision: 'a decision by a person',
  join: 'its children',
};

function waitFacts(w: WaitRecord, jobId: string, nowMs: number, index = 0): Html {
  const row = (k: string, v: Html | string) => html`<dt>${k}</dt><dd>${v}</dd>`;
  const at = w.wakeAt ? html`${time(w.wakeAt)} <span class="muted small">(${relative(w.wakeAt, nowMs)})</span>` : 'never';
  return html`<dl class="facts" id="${index === 0 ? 'job-wait' : `job-wait-${index + 1}`}">${[
    row(index === 0 ? 'waits for' : 'also waits for', html`${WAIT_KINDS[w.kind]} <code>${w.name}</code>`),
    row('since', html`${time(w.since)} <span class="muted small">(${relative(w.since, nowMs)})</span>`),
    row(w.kind === 'sleep' ? 'wakes at' : 'times out at', at),
    w.key !== null ? row('key', html`<code>${w.key}</code>`) : '',
    w.prompt !== null ? row('prompt', w.prompt) : '',
    w.choices !== null ? row('choices', join(w.choices.map((c) => html`<code>${c}</code>`), ', ')) : '',
    w.children !== null ? row('children', join(w.children.map((id) => html`<a href="/ui/jobs/${id}">#${id}</a>`), ', ')) : '',
  ]}</dl>${w.kind === 'decision' ? html`<p><a href="/ui/decisions?job=${jobId}" id="job-decide">Decide on the Decisions page →</a></p>` : ''}`;
}

function memberRow(m: FamilyMember, relation: string): Html {
  return html`<tr><td>${relation}</td><td><code>${m.name}</code></td><td><a href="/ui/jobs/${m.jobId}" id="family-${m.jobId}">#${m.jobId}</a> <span class="muted small">${m.type}</span></td><td>${badge(m.status)}</td><td>${m.detached ? 'yes' : 'no'}</td></tr>`;
}

export const JOB_SECTIONS: readonly Section[] = [
  {
    id: 'wait',
    title: 'Waits for',
    shown: (d) => d.job.status === 'waiting' && !!d.job.wait,
    // Every open wait: a job suspended on a race (a decision or a sleep) waits for each.
    body: (d) => html`${(d.job.waits?.length ? d.job.waits : [d.job.wait!]).map((w, i) => waitFacts(w, d.job.id, d.nowMs, i))}`,
  },
  {
    id: 'family',
    title: 'Parent and children',
    shown: (d) => d.family.parent !== null || d.family.children.length > 0,
    body: (d) =>
      html`${table(
        [{ label: 'relation' }, { label: 'spawned as' }, { label: 'job' }, { label: 'status' }, { label: 'detached' }],
        [d.family.parent ? memberRow(d.family.parent, 'parent') : '', d.family.children.map((c) => memberRow(c, 'child'))],
        'Parent and children of this job',
      )}${d.family.children.length >= CHILDREN_SHOWN ? html`<p class="muted small">The first ${CHILDREN_SHOWN} children by name.</p>` : ''}`,
  },
  { id: 'payload', title: 'Payload', shown: () => true, body: (d) => jsonBlock(d.job.payload, 'payload') },
  { id: 'result', title: 'Result', shown: (d) => d.job.status === 'succeeded', body: (d) => jsonBlock(d.job.result, 'result') },
  // A succeeded job shows its result, not an earlier attempt's error (the attempts ledger keeps that).
  {
    id: 'error',
    title: 'Last error',
    shown: (d) => d.job.status !== 'succeeded' && d.job.lastError !== null && d.job.lastError !== undefined,
    body: (d) => errorBlock(d.job.lastError, 'last error'),
  },
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
        : html`<p class="muted" id="attempts-none">${noLedgerRows(d.job.status)}</p>`,
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

/**
 * When the job runs: a waiting job stored as due at 9999-01-01 (none of its waits
 * has a wake time or timeout) runs when what it waits for arrives, else at
 * the soonest of them (its run_at, whichever wait is newest); an ended job
 * runs no more, so its due time gets no "in ..." (a cancelled scheduled job
 * read "in 7 min", a cancelled waiting one "9999-01-01").
 */
function runAt(d: JobData): Html {
  const j = d.job;
  const never = dueNever(j);
  if (j.status === 'succeeded' || j.status === 'failed' || j.status === 'cancelled') {
    return never ? html`·` : html`${time(j.runAt)} <span class="muted small">(it ended: it runs again only if retried)</span>`;
  }
  if (never) return html`<span class="muted">when what it waits for arrives</span>`;
  return html`${time(j.runAt)} <span class="muted small">(${relative(j.runAt, d.nowMs)})</span>`;
}

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
    row('run at', runAt(d)),
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
    ended
      ? ''
      : actionButton(viewer, {
          action: `/ui/jobs/${j.id}/cancel`,
          label: 'Cancel',
          target,
          id: 'job-cancel',
          confirm: `Cancel job #${j.id}? Its unfinished children are cancelled with it (not those spawned detached). A cancelled job runs again only if retried.`,
        }),
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

/** Why a job's attempts ledger is empty, by what the job is now. */
export function noLedgerRows(status: JobStatus): string {
  if (status === 'succeeded') return 'It succeeded on its first attempt: a first success is recorded on the job itself (its status, result and finish time above), not in the ledger.';
  if (status === 'failed' || status === 'cancelled') return `No attempt of it settled: it was ${status === 'failed' ? 'failed' : 'cancelled'} before it ran or while it waited.`;
  return 'No attempt has settled yet: the ledger gets a row when an execution fails, retries, is recovered or is cancelled while it runs, or succeeds after an earlier attempt.';
}
