// The Alerts view: what sys.alerts opened and resolved — the open alerts
// first, then the most recent resolved ones — each with its rule, key,
// state, when it opened and resolved, and the details its rule recorded.
// Read-only: an alert resolves when its condition clears.
import type { AlertRecord } from '../../../db/protocol.js';
import type { AlertsData, AlertsEvaluation } from '../data/alertsData.js';
import { relative, time } from '../format.js';
import { html, join, type Html } from '../html.js';
import type { Page } from '../layout.js';
import { badge, notice, table } from './common.js';

const HEADERS = [{ label: 'rule' }, { label: 'key' }, { label: 'state' }, { label: 'opened' }, { label: 'resolved' }, { label: 'details' }];

/** The details as `name value` pairs: small objects of numbers and names. */
function details(d: Record<string, unknown>): Html {
  const entries = Object.entries(d);
  if (entries.length === 0) return html`<span class="muted">·</span>`;
  return html`<span class="note">${join(
    entries.map(([k, v]) => html`${k} <b>${typeof v === 'string' ? v : JSON.stringify(v)}</b>`),
    '; ',
  )}</span>`;
}

function row(a: AlertRecord, nowMs: number): Html {
  const when = (d: Date | null) => (d ? html`${time(d)}<br><span class="muted small">${relative(d, nowMs)}</span>` : '·');
  return html`<tr data-alert="${a.rule}/${a.key}/${a.openedAt.toISOString()}"><td><code>${a.rule}</code></td><td><code>${a.key}</code></td><td>${badge(a.state, a.state === 'open' ? 'failed' : 'succeeded')}</td><td>${when(a.openedAt)}</td><td>${when(a.resolvedAt)}</td><td>${details(a.details)}</td></tr>`;
}

/** Whether anything evaluates the rules: a problem box when nothing does (or it stopped), else when they last ran. */
function evaluated(e: AlertsEvaluation, nowMs: number): Html {
  const how = html`a worker with <code>scheduleNamespaces: ['sys']</code> and <code>alerts</code>, or ticks of an app with <code>alerts</code> (docs/operations.md)`;
  switch (e.state) {
    case 'none':
      return html`<p class="problem" id="alerts-unevaluated">Nothing evaluates the alert rules in this namespace: the <code>sys.alerts</code> slot does not exist, so no alert can open. Run ${how}.</p>`;
    case 'disabled':
      return html`<p class="problem" id="alerts-unevaluated">The <code>sys.alerts</code> slot is disabled: the rules are not evaluated, and the alerts below stay as they were. Enable it on the Schedules page.</p>`;
    case 'overdue':
      return html`<p class="problem" id="alerts-unevaluated">The rules have not been evaluated ${
        e.lastFiredAt ? html`since ${time(e.lastFiredAt)} (${relative(e.lastFiredAt, nowMs)})` : 'yet'
      }, more than three of the <code>sys.alerts</code> cadences and three minutes: nothing running fires it. Run ${how}.</p>`;
    case 'stalled':
      return html`<p class="problem" id="alerts-unevaluated">The rules have not been evaluated since ${time(e.dueSince)} (${relative(
        e.dueSince,
        nowMs,
      )}): the <code>sys.alerts</code> job due then, <a href="/ui/jobs/${e.jobId}">#${e.jobId}</a>, has not run, so nothing runs the <code>sys</code> queue. Resume it (Queues) or the worker that runs it (Workers), or run ${how}.</p>`;
    default: {
      // When the rules last ran: when the last cadence's job finished; until it has, when the slot fired.
      if (e.ranAt) return html`<p class="muted" id="alerts-evaluated">Rules last evaluated ${time(e.ranAt)} (${relative(e.ranAt, nowMs)}).</p>`;
      return e.lastFiredAt
        ? html`<p class="muted" id="alerts-evaluated"><code>sys.alerts</code> last fired ${time(e.lastFiredAt)} (${relative(e.lastFiredAt, nowMs)}); its job has not finished yet.</p>`
        : html``;
    }
  }
}

export function alertsView(d: AlertsData): Page {
  const section = (id: string, title: string, alerts: AlertRecord[], empty: string) =>
    html`<section aria-labelledby="sec-${id}"><h2 id="sec-${id}">${title}</h2>${
      alerts.length ? table(HEADERS, alerts.map((a) => row(a, d.nowMs)), title) : html`<p class="muted" id="${id}-empty">${empty}</p>`
    }</section>`;
  return {
    title: 'Alerts',
    nav: '/ui/alerts',
    liveMs: 5000,
    head: html`<h1>Alerts</h1><p class="lede">What the sys.alerts rules found: an alert opens once when its condition appears and resolves when it clears (docs/operations.md lists the rules).</p>${notice(d.query.done, d.query.subject)}`,
    live: html`${evaluated(d.evaluation, d.nowMs)}${section('alerts-open', 'Open alerts', d.open, 'No alert is open.')}${section('alerts-resolved', `Resolved alerts (the latest ${d.resolvedShown})`, d.resolved, 'No alert has resolved yet.')}`,
  };
}
