// The Workers view: the registry, the only membership list — kind, build,
// queues, job types, concurrency, self-reported active count beside the
// leases the worker really holds, last seen, heartbeat age against its
// interval (a worker silent for a lease window is flagged; after seven
// heartbeats recovery marks it dead), state and operator pause, with
// Pause / Resume buttons for viewers holding `admin`
// (admin.setWorkerPaused, picked up at the worker's next registry refresh).
import type { WorkerRecord } from '../../../db/protocol.js';
import { DEAD_HEARTBEATS, LEASE_HEARTBEATS } from '../../../timing.js';
import type { WorkersData } from '../data/fleetData.js';
import { duration, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { Page } from '../layout.js';
import type { Viewer } from '../uiEnv.js';
import { actionButton, badge, notice, pathSegment, table } from './common.js';

const HEADERS = [
  { label: 'worker' },
  { label: 'kind' },
  { label: 'build' },
  { label: 'queues' },
  { label: 'types' },
  { label: 'concurrency', num: true },
  { label: 'active', num: true },
  { label: 'leases', num: true },
  { label: 'last seen' },
  { label: 'heartbeat age' },
  { label: 'state' },
  { label: 'operator pause' },
];

function heartbeat(w: WorkerRecord, ageMs: number | undefined): Html | string {
  if (ageMs === undefined) return '·';
  const silent = ageMs > LEASE_HEARTBEATS * w.heartbeatMs;
  const dead = ageMs > DEAD_HEARTBEATS * w.heartbeatMs;
  return html`${duration(ageMs)} <span class="muted small">(every ${duration(w.heartbeatMs)})</span>${
    dead ? html` <b>silent past the dead threshold</b>` : silent ? html` <b>silent past its lease window</b>` : ''
  }`;
}

function row(w: WorkerRecord, d: WorkersData, viewer: Viewer | null, i: number): Html {
  const age = d.ages.get(w.id);
  const action = w.operatorPaused
    ? actionButton(viewer, { action: `/ui/workers/${pathSegment(w.id)}/resume`, label: 'Resume', target: `worker ${w.id}`, id: `worker-${i}-resume` })
    : actionButton(viewer, { action: `/ui/workers/${pathSegment(w.id)}/pause`, label: 'Pause', target: `worker ${w.id}`, id: `worker-${i}-pause` });
  return html`<tr data-worker="${w.id}"><td><code>${w.id}</code></td><td>${w.kind}${w.deadline ? html`<br><span class="muted small">until ${time(w.deadline)}</span>` : ''}</td><td>${w.build || '·'}</td><td>${w.queues.join(', ') || 'all'}</td><td class="small">${w.types.join(', ') || '·'}</td><td class="num">${w.concurrency}</td><td class="num">${w.active}</td><td class="num">${age?.leases ?? 0}</td><td>${time(w.lastSeen)}</td><td>${heartbeat(w, age?.heartbeatAgeMs)}</td><td>${badge(w.state)}</td><td>${w.operatorPaused ? badge('paused') : 'no'} ${action}</td></tr>`;
}

export function workersView(d: WorkersData, viewer: Viewer | null): Page {
  const body = d.workers.map((w, i) => row(w, d, viewer, i));
  return {
    title: 'Workers',
    nav: '/ui/workers',
    liveMs: 2000,
    head: html`<h1>Workers</h1><p class="lede">The registry: every worker registers here, heartbeats, and is the only record of who is in the fleet.</p>${notice(d.query.done, d.query.subject)}`,
    live: d.workers.length
      ? html`<p class="muted small">${d.workers.length} registered.</p>${table(HEADERS, body, 'Registered workers')}`
      : html`<p id="workers-empty">No worker is registered in this namespace.</p>`,
  };
}
