// The Outbox view: the events the transactional outbox has not delivered
// (pending, with the next attempt's time) and those that ran out of
// attempts (dead), newest first, filterable by state and topic: topic, key,
// attempts, the last error. For viewers holding `admin`, Retry (a dead or
// waiting event: due now with a fresh attempt budget) and Discard (deleted,
// never delivered), each client.outbox.retry / discard of that one event.
// A page holds the newest 100; Older events pages on by the last id shown.
import type { OutboxEventRecord } from '../../../db/protocol.js';
import { OUTBOX_STATES, outboxPageUrl, type OutboxData, type OutboxFilter } from '../data/outboxData.js';
import { relative, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { Page } from '../layout.js';
import type { Viewer } from '../uiEnv.js';
import { actionButton, badge, notice, shortLine, table } from './common.js';

function errorText(e: unknown): string {
  if (e === null || e === undefined) return '';
  if (typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return typeof e === 'string' ? e : JSON.stringify(e);
}

/** The page's filter and cursor, posted with an action so it answers back to this page (it went to the unfiltered first page). */
function pageFields(f: OutboxFilter): Record<string, string> {
  return Object.fromEntries(Object.entries({ state: f.state, topic: f.topic, before: f.before }).filter((e): e is [string, string] => e[1] !== undefined));
}

function row(e: OutboxEventRecord, viewer: Viewer | null, nowMs: number, filter: OutboxFilter): Html {
  const err = errorText(e.lastError);
  const next =
    e.state === 'pending'
      ? e.leasedUntil && e.leasedUntil.getTime() > nowMs
        ? html`being delivered`
        : html`${time(e.availableAt)}<br><span class="muted small">${relative(e.availableAt, nowMs)}</span>`
      : e.state === 'delivered'
        ? html`delivered ${time(e.deliveredAt)}`
        : '·';
  const target = `event #${e.id}`;
  const buttons =
    e.state === 'delivered'
      ? ''
      : html`<div class="actions">${[
          actionButton(viewer, { action: `/ui/outbox/${e.id}/retry`, label: 'Retry', target, id: `outbox-retry-${e.id}`, fields: pageFields(filter) }),
          actionButton(viewer, {
            action: `/ui/outbox/${e.id}/discard`,
            label: 'Discard',
            target,
            id: `outbox-discard-${e.id}`,
            confirm: `Discard outbox event #${e.id}? It will never be delivered.`,
            fields: pageFields(filter),
          }),
        ]}</div>`;
  return html`<tr data-event="${e.id}"><td class="num">#${e.id}</td><td><code>${e.topic}</code></td><td>${e.key === null ? html`<span class="muted">·</span>` : html`<code>${e.key}</code>`}</td><td>${badge(e.state, e.state === 'dead' ? 'failed' : e.state === 'pending' ? 'ready' : 'succeeded')}</td><td class="num">${e.attempts}</td><td>${time(e.createdAt)}</td><td>${next}</td><td>${lastError(e.id, err)}</td><td>${buttons}</td></tr>`;
}

function pager(d: OutboxData): Html {
  const newest = d.filter.before ? html`<a href="${outboxPageUrl(d.filter)}" id="outbox-newest">← Newest</a>` : '';
  const older = d.nextBefore ? html`<a href="${outboxPageUrl(d.filter, d.nextBefore)}" id="outbox-older">Older events →</a>` : '';
  return newest || older ? html`<div class="pager">${newest}${older}</div>` : html``;
}

function filters(d: OutboxData): Html {
  const f = d.filter;
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="/ui/outbox" role="search" aria-label="Filter events">
<label for="o-state">State<select id="o-state" name="state">${option('', 'pending and dead', !f.state)}${OUTBOX_STATES.map((s) => option(s, s, s === f.state))}</select></label>
<label for="o-topic">Topic<input id="o-topic" name="topic" value="${f.topic ?? ''}" placeholder="any topic" autocomplete="off"></label>
<button type="submit" class="primary">Filter</button> <a class="button" href="/ui/outbox">Clear</a>
</form>`;
}

export function outboxView(d: OutboxData, viewer: Viewer | null): Page {
  const headers = [{ label: 'event', num: true }, { label: 'topic' }, { label: 'key' }, { label: 'state' }, { label: 'attempts', num: true }, { label: 'published' }, { label: 'next attempt' }, { label: 'last error' }, { label: '' }];
  const what = d.filter.state ?? 'pending or dead';
  const list = d.events.length
    ? html`${table(headers, d.events.map((e) => row(e, viewer, d.nowMs, d.filter)), 'Outbox events')}${pager(d)}`
    : html`<p id="outbox-empty">No ${what} event${d.filter.topic ? html` on topic <code>${d.filter.topic}</code>` : ''}${d.filter.before ? html` older than #${d.filter.before}` : ''}.</p>${pager(d)}`;
  return {
    title: 'Outbox',
    nav: '/ui/outbox',
    liveMs: 5000,
    head: html`<h1>Outbox</h1><p class="lede">Events published with client.publish (and job lifecycle events) on their way to the sinks: pending ones wait for their next attempt, dead ones ran out of attempts.</p>${notice(d.filter.done, d.filter.subject)}${filters(d)}`,
    live: list,
  };
}

/** An event's last error: whole when short; else its first line, cut with an ellipsis, and the whole text folded under it. */
function lastError(id: string, err: string | null | undefined): Html | '' {
  if (!err) return '';
  if (err.length <= ERROR_SHOWN) return html`<span class="note">${err}</span>`;
  return html`<details id="outbox-error-${id}"><summary class="note">${shortLine(err, ERROR_SHOWN)}</summary><pre class="stack" tabindex="0" aria-label="last error of event #${id}">${err}</pre></details>`;
}

/** The characters of a last error shown in the row before it folds. */
const ERROR_SHOWN = 300;
