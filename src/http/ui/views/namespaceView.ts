// The Namespace view: the namespace as the database sees it, the fleet
// page's table (job, status, leased by, lease time left, execution, note)
// with the attempt and queue beside them, filterable by queue, type and
// status, newest first, one page at a time. The note says what explains a
// row: its concurrency key (and the job holding that gate), the worker
// recovery took it from, a due time still ahead, a paused queue, a claim not
// started yet, the last error, and what a waiting job waits for (a sleep's
// wake time, a signal, a decision or its children, with the timeout).
// Columns are descriptors: one that only some rows have is shown when a row
// on the page has it.
import type { DashboardJobRow, DashboardWait } from '../../../db/dashboard.js';
import { JOB_STATUSES } from '../../../db/protocol.js';
import { PAGE_SIZE, type NamespaceData, type NamespaceFilter } from '../data/namespaceData.js';
import { count, duration, time } from '../format.js';
import { html, join, type Html, type HtmlValue } from '../html.js';
import type { Page } from '../layout.js';
import { badge, notice, table } from './common.js';

interface Column {
  label: string;
  num?: boolean;
  /**
   * Kept at a readable width on a narrow screen, the table scrolling in its
   * frame instead: `wide` for wrapped text (the note), `name` for names
   * (a job's type, a queue), which broke after every few letters.
   */
  width?: 'wide' | 'name';
  cell(row: DashboardJobRow, paused: ReadonlySet<string>): HtmlValue;
  /** Shown only when this says so for the page's rows (default: always). */
  shown?(rows: readonly DashboardJobRow[]): boolean;
}

function leaseLeft(r: DashboardJobRow): string {
  if (r.leaseExpiresInMs === null) return '·';
  return r.leaseExpiresInMs >= 0 ? `${duration(r.leaseExpiresInMs)} left` : `expired ${duration(-r.leaseExpiresInMs)} ago`;
}

const WAITS_FOR: Record<DashboardWait['kind'], string> = { sleep: 'sleeps', signal: 'waits for signal', decision: 'waits for decision', join: 'waits for children' };

/** What a waiting row waits for: "waits for decision approve, times out in 5 min". */
function waitNote(w: DashboardWait): Html {
  const at = w.wakeInMs === null ? '' : w.wakeInMs > 0 ? `in ${duration(w.wakeInMs)}` : 'now';
  const when = at ? `, ${w.kind === 'sleep' ? 'wakes' : 'times out'} ${at}` : '';
  const others = w.others > 0 ? ` (and ${w.others} more wait${w.others === 1 ? '' : 's'})` : '';
  return html`${WAITS_FOR[w.kind]} <b>${w.name}</b>${w.key !== null ? html` on key <b>${w.key}</b>` : ''}${when}${others}`;
}

export function jobNotes(r: DashboardJobRow, paused: ReadonlySet<string>): Html[] {
  const notes: Html[] = [];
  if (r.wait) notes.push(waitNote(r.wait));
  // Who holds the key's gate matters to a job that still needs it: a finished one does not.
  const blocked = r.gateHeldBy !== null && (r.status === 'ready' || r.status === 'waiting');
  if (r.concurrencyKey) notes.push(html`key <b>${r.concurrencyKey}</b>${blocked ? html`, held by <a href="/ui/jobs/${r.gateHeldBy}">#${r.gateHeldBy}</a>` : ''}`);
  if (r.recoveredFrom) notes.push(html`recovered from <b>${r.recoveredFrom}</b>`);
  if (r.status === 'ready' && r.dueInMs > 0) notes.push(html`due in ${duration(r.dueInMs)}`);
  if (r.status === 'ready' && paused.has(r.queue)) notes.push(html`queue paused`);
  if (r.leaseStarted === false) notes.push(html`claimed, not started yet`);
  if (r.errorMessage && (r.status === 'failed' || r.status === 'ready')) notes.push(html`last error: ${r.errorMessage}`);
  if (r.dedupeKey) notes.push(html`dedupe <b>${r.dedupeKey}</b>`);
  return notes;
}

const COLUMNS: readonly Column[] = [
  { label: 'job', width: 'name', cell: (r) => html`<a href="/ui/jobs/${r.id}" id="job-${r.id}">#${r.id}</a> <span class="muted small">${r.type}</span>` },
  { label: 'queue', width: 'name', cell: (r) => r.queue },
  { label: 'status', cell: (r) => badge(r.status) },
  { label: 'leased by', cell: (r) => r.leasedBy ?? '·' },
  { label: 'lease', cell: leaseLeft },
  { label: 'execution', num: true, cell: (r) => r.execution },
  { label: 'attempt', num: true, cell: (r) => `${r.attempt} / ${r.maxAttempts}` },
  { label: 'note', width: 'wide', cell: (r, paused) => html`<span class="note">${join(jobNotes(r, paused), '; ')}</span>` },
];

function query(f: NamespaceFilter, before?: string): string {
  const q = new URLSearchParams();
  if (f.queue) q.set('queue', f.queue);
  if (f.type) q.set('type', f.type);
  if (f.status) q.set('status', f.status);
  if (before) q.set('before', before);
  const s = q.toString();
  return s ? `/ui?${s}` : '/ui';
}

/**
 * The filter form. Queue and type are typed (with the known ones offered):
 * a queue whose jobs have all ended (its failed jobs, the ones an operator
 * looks for) is not among the queues listQueues counts, and a list to pick
 * from left it out.
 */
function filters(d: NamespaceData): Html {
  const f = d.filter;
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="/ui" role="search" aria-label="Filter jobs">
<label for="f-queue">Queue<input id="f-queue" name="queue" list="f-queues" value="${f.queue ?? ''}" placeholder="any queue" autocomplete="off"></label>
<datalist id="f-queues">${d.queues.map((q) => html`<option value="${q.name}"></option>`)}</datalist>
<label for="f-type">Type<input id="f-type" name="type" list="f-types" value="${f.type ?? ''}" placeholder="any type" autocomplete="off"></label>
<datalist id="f-types">${d.types.map((t) => html`<option value="${t}"></option>`)}</datalist>
<label for="f-status">Status<select id="f-status" name="status">${option('', 'any status', !f.status)}${JOB_STATUSES.map((s) => option(s, s, s === f.status))}</select></label>
<button type="submit" class="primary">Filter</button> <a class="button" href="/ui">Clear</a>
</form>`;
}

function pager(d: NamespaceData): Html {
  const { page, filter } = d;
  const first = filter.before ? html`<a href="${query(filter)}" id="page-newest">← Newest</a>` : '';
  const older = page.nextBeforeId ? html`<a href="${query(filter, page.nextBeforeId)}" id="page-older">${page.jobs.length < PAGE_SIZE ? 'Search older jobs' : 'Older jobs'} →</a>` : '';
  // Ids are bigint: a JavaScript number rounds them above 2^53.
  const top = filter.before ? String(BigInt(filter.before) - 1n) : null;
  const searched =
    page.searchedDownTo !== null && page.nextBeforeId !== null && page.jobs.length < PAGE_SIZE
      ? html`<span class="muted small">Searched jobs #${page.searchedDownTo}${top !== null ? html`–#${top}` : ' and newer'}; older jobs were not searched yet.</span>`
      : '';
  return html`<div class="pager">${first}${older}${searched}</div>`;
}

export function namespaceView(d: NamespaceData): Page {
  const paused = new Set(d.queues.filter((q) => q.paused).map((q) => q.name));
  const rows = d.page.jobs;
  const columns = COLUMNS.filter((c) => !c.shown || c.shown(rows));
  const body = rows.map((r) => html`<tr data-job="${r.id}">${columns.map((c) => html`<td${c.num ? html` class="num"` : c.width ? html` class="${c.width}"` : ''}>${c.cell(r, paused)}</td>`)}</tr>`);
  // "6 failed jobs in queue mail of type email.send on this page"
  const status = d.filter.status ? `${d.filter.status} ` : '';
  const where = [d.filter.queue && ` in queue ${d.filter.queue}`, d.filter.type && ` of type ${d.filter.type}`].filter(Boolean).join('');
  const summary = html`<p class="muted small" id="ns-summary">${count(rows.length)} ${status}job${rows.length === 1 ? '' : 's'}${where} on this page, newest first, as of ${time(d.page.asOf)}.</p>`;
  const searched = d.page.nextBeforeId ? 'among the jobs searched' : d.filter.before ? 'in this range' : 'yet';
  const empty = rows.length === 0 ? html`<p id="ns-empty">No ${status}jobs${where} ${searched}.</p>` : '';
  return {
    title: 'Namespace',
    nav: '/ui',
    liveMs: 1500,
    head: html`<h1>Namespace</h1>${notice(d.filter.done, d.filter.subject)}${filters(d)}`,
    live: html`${summary}${empty}${rows.length ? table(columns, body, 'Jobs of the namespace') : ''}${pager(d)}`,
  };
}
