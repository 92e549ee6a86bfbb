// The Queues view: per queue its depth by status (due, scheduled, running,
// waiting, failed, cancelled), how long the oldest due job has waited, its
// limits and rate limit, paused or not (Pause / Resume for viewers holding
// `admin`: admin.pauseQueue / resumeQueue), then the last hour as two charts
// per queue drawn from the database: attempts per minute by outcome (the
// attempts ledger) and the backlog at the end of each minute. Each chart
// has a caption and a data table that say the same in words.
import type { QueueRecord } from '../../../db/protocol.js';
import type { QueueDepth } from '../../../db/dashboard.js';
import { CHART_MINUTES, type QueuesData } from '../data/fleetData.js';
import { count, duration } from '../format.js';
import { html, type Html } from '../html.js';
import type { Page } from '../layout.js';
import { can, type Viewer } from '../uiEnv.js';
import { backlogChart, minuteLabels, throughputChart, totalOf, type BarChart, type LineChart } from './chartData.js';
import { actionButton, badge, notice, pathSegment, table } from './common.js';

const HEADERS = [
  { label: 'queue' },
  { label: 'state' },
  { label: 'due', num: true },
  { label: 'scheduled', num: true },
  { label: 'running', num: true },
  { label: 'waiting', num: true },
  { label: 'failed', num: true },
  { label: 'cancelled', num: true },
  { label: 'oldest due' },
  { label: 'concurrency limit', num: true },
  { label: 'rate limit' },
];

function row(q: QueueRecord, depth: QueueDepth | undefined, viewer: Viewer | null, i: number, pausable: boolean): Html {
  const acting = can(viewer, 'admin');
  const action = !pausable
    ? ''
    : q.paused
    ? actionButton(viewer, { action: `/ui/queues/${pathSegment(q.name)}/resume`, label: 'Resume', target: `queue ${q.name}`, id: `queue-${i}-resume` })
    : actionButton(viewer, { action: `/ui/queues/${pathSegment(q.name)}/pause`, label: 'Pause', target: `queue ${q.name}`, id: `queue-${i}-pause` });
  const num = (n: number) => html`<td class="num">${count(n)}</td>`;
  return html`<tr data-queue="${q.name}"><td><a href="/ui?queue=${encodeURIComponent(q.name)}"><code>${q.name}</code></a></td><td>${q.paused ? badge('paused') : badge('active')}</td>${num(depth?.due ?? 0)}${num(depth?.scheduled ?? 0)}${num(q.running)}${num(q.waiting)}${num(depth?.failed ?? 0)}${num(depth?.cancelled ?? 0)}<td>${depth?.oldestDueMs == null ? '·' : duration(depth.oldestDueMs)}</td><td class="num">${q.concurrencyLimit ?? '·'}</td><td>${q.rateLimit === null ? '·' : `${q.rateLimit} per ${duration(q.ratePeriodMs)}`}</td>${acting ? html`<td>${action}</td>` : ''}</tr>`;
}

/** A chart's data as a table, folded; its id (the chart and queue) lets a live refresh keep it open. */
function dataTable(id: string, caption: string, labels: string[], columns: { name: string; values: number[] }[]): Html {
  const rows = labels.map((l, i) => html`<tr><td>${l.slice(11, 16)} UTC</td>${columns.map((c) => html`<td class="num">${c.values[i]}</td>`)}</tr>`);
  return html`<details id="${id}"><summary>Data table</summary>${table([{ label: 'minute' }, ...columns.map((c) => ({ label: c.name, num: true }))], rows, caption)}</details>`;
}

function throughputFigure(queue: string, c: BarChart): Html {
  const total = totalOf(c);
  const peak = Math.max(0, ...c.labels.map((_, i) => c.series.reduce((s, x) => s + x.values[i]!, 0)));
  const legend = c.series.map((s) => html`<li><i class="l-${s.name}"></i>${s.name}</li>`);
  return html`<figure class="chart" data-chart="${JSON.stringify(c)}"><figcaption><b>${queue}</b>: throughput, attempts per minute over the last hour. ${count(total)} in all, at most ${count(peak)} in a minute.</figcaption><ul class="legend">${legend}</ul>${dataTable(`throughput-data-${encodeURIComponent(queue)}`, `Attempts per minute, queue ${queue}`, c.labels, c.series)}</figure>`;
}

function backlogFigure(queue: string, c: LineChart): Html {
  const now = c.values.at(-1) ?? 0;
  const peak = Math.max(0, ...c.values);
  return html`<figure class="chart" data-chart="${JSON.stringify(c)}"><figcaption><b>${queue}</b>: backlog, jobs enqueued and not finished, at the end of each minute. ${count(now)} now, at most ${count(peak)} in the last hour.</figcaption>${dataTable(`backlog-data-${encodeURIComponent(queue)}`, `Backlog per minute, queue ${queue}`, c.labels, [{ name: 'outstanding', values: c.values }])}</figure>`;
}

export function queuesView(d: QueuesData, viewer: Viewer | null): Page {
  const names = [...new Set([...d.pausable, ...d.depth.keys(), ...d.throughput.map((p) => p.queue), ...d.backlog.map((p) => p.queue)])].sort();
  const byName = new Map(d.queues.map((q) => [q.name, q]));
  const records = names.map(
    (n): QueueRecord => byName.get(n) ?? { name: n, paused: false, concurrencyLimit: null, rateLimit: null, ratePeriodMs: 1000, ready: 0, running: 0, waiting: 0 },
  );
  const asOf = d.backlog.at(-1)?.at ?? new Date();
  const labels = minuteLabels(asOf, CHART_MINUTES);
  const charted = names.filter((n) => d.throughput.some((p) => p.queue === n) || d.backlog.some((p) => p.queue === n));
  const charts = charted.map((n) => html`${throughputFigure(n, throughputChart(d.throughput, n, labels))}${backlogFigure(n, backlogChart(d.backlog, n, labels))}`);
  return {
    title: 'Queues',
    nav: '/ui/queues',
    liveMs: 5000,
    head: html`<h1>Queues</h1><p class="lede">Depth by status, limits and pause state; below, the last hour per queue, drawn from the attempts ledger and the job counts.</p>${notice(d.query.done, d.query.subject)}`,
    live: html`${records.length ? table(can(viewer, 'admin') ? [...HEADERS, { label: 'action' }] : HEADERS, records.map((q, i) => row(q, d.depth.get(q.name), viewer, i, d.pausable.has(q.name))), 'Queues of the namespace') : html`<p id="queues-empty">No queue holds jobs or has a policy yet.</p>`}
<h2>The last hour</h2>${charts.length ? html`<div class="charts">${charts}</div>` : html`<p class="muted">No attempts and no backlog in the last hour.</p>`}`,
  };
}
