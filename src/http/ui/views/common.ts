// Pieces every view uses: status badges, the action buttons (only for a
// viewer holding `admin`, each a form carrying the session's CSRF token and
// a name that says what it acts on), and the one-line notice an action
// leaves on the page it returns to (shown only when the action's flash
// cookie vouches for it: src/http/ui/flashNotice.ts).
import * as z from 'zod';
import { storableText } from '../../../storable.js';
import { html, type Html, type HtmlValue } from '../html.js';
import { can, type Viewer } from '../uiEnv.js';

export function badge(text: string, kind = text): Html {
  return html`<span class="badge s-${kind}">${text}</span>`;
}

export interface ActionButton {
  /** Where the form posts (a /ui action route). */
  action: string;
  label: string;
  /** Said to screen readers after the label: what it acts on ("queue reports"). */
  target: string;
  /** Unique on the page, so focus survives a live refresh. */
  id: string;
  /** An action that cannot be undone: styled as such, and the browser asks this question first (confirmScript.ts). */
  confirm?: string;
  /** Hidden fields the action reads besides the CSRF token (the page's filter, to answer back to it). */
  fields?: Record<string, string>;
}

/**
 * A name as one segment of a /ui path: percent-encoded, dots of a `.` or
 * `..` name too (a browser resolves those away). Names reach the views from
 * the database, which any client may have written.
 */
export function pathSegment(name: string): string {
  return /^\.+$/.test(name) ? name.replace(/\./g, '%2E') : encodeURIComponent(name);
}

export function actionButton(viewer: Viewer | null, b: ActionButton): Html | '' {
  if (!can(viewer, 'admin')) return '';
  const csrf = viewer!.csrf ? html`<input type="hidden" name="csrf" value="${viewer!.csrf}">` : '';
  const ask = b.confirm ? html` data-confirm="${b.confirm}"` : '';
  const fields = Object.entries(b.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<form class="inline" method="post" action="${b.action}"${ask}>${csrf}${fields}<button type="submit" id="${b.id}"${b.confirm ? html` class="danger"` : ''}>${b.label}<span class="visually-hidden"> ${b.target}</span></button></form>`;
}

const NOTICES = {
  'queue-paused': (s: string) => `Queue ${s} paused: no worker claims from it until it is resumed.`,
  'queue-resumed': (s: string) => `Queue ${s} resumed.`,
  'worker-paused': (s: string) => `Worker ${s} paused by the operator: it stops claiming at its next registry refresh.`,
  'worker-resumed': (s: string) => `Worker ${s} resumed.`,
  'job-retried': (s: string) => `Job #${s} is ready again with a fresh attempt budget.`,
  'job-run-now': (s: string) => `Job #${s} is due now.`,
  'job-cancelled': (s: string) => `Job #${s} cancelled.`,
  'decision-made': (s: string) => `Recorded ${s}: the job resumes.`,
  'event-retried': (s: string) => `Outbox event #${s} is due now with a fresh attempt budget.`,
  'event-discarded': (s: string) => `Outbox event #${s} discarded: it will never be delivered.`,
} as const;

export type NoticeCode = keyof typeof NOTICES;

const ID = /^[1-9][0-9]{0,18}$/;
/**
 * The shape each notice's subject has when an action wrote it: a notice is
 * a link's query string, so one whose subject has another shape (a
 * sentence of someone else's, "payments (all refunds were issued, call
 * ...)") is not shown rather than shown as the dashboard's word.
 */
const SUBJECTS: Record<NoticeCode, RegExp> = {
  'queue-paused': /^[A-Za-z0-9_.:-]{1,100}$/,
  'queue-resumed': /^[A-Za-z0-9_.:-]{1,100}$/,
  // A worker id: any characters but control ones (`my worker` has a space; the id schema allows it).
  'worker-paused': /^[^\p{Cc}]{1,200}$/u,
  'worker-resumed': /^[^\p{Cc}]{1,200}$/u,
  'job-retried': ID,
  'job-run-now': ID,
  'job-cancelled': ID,
  // decisionSubject's shape: a choice and a name of any characters but line breaks, shortened.
  'decision-made': /^"[^\n]{1,80}" on decision [^\n]{1,60} of job #[1-9][0-9]{0,18}$/,
  'event-retried': ID,
  'event-discarded': ID,
};

/** The query parameters an action's redirect adds: what was done, and to what. */
export const noticeQuery = {
  done: z.enum(Object.keys(NOTICES) as [NoticeCode, ...NoticeCode[]]).optional(),
  subject: storableText(z.string().max(200)).optional(),
};

export function noticeUrl(path: string, done: NoticeCode, subject: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}done=${done}&subject=${encodeURIComponent(subject)}`;
}

/** `s` on one line (each run of whitespace or control characters one space), cut to `max` UTF-16 units with an ellipsis. */
export function shortLine(s: string, max: number): string {
  const line = s.replace(/[\s\p{Cc}]+/gu, ' ');
  if (line.length <= max) return line;
  let cut = max - 1;
  if (/[\uD800-\uDBFF]/.test(line[cut - 1]!)) cut--; // never split a surrogate pair
  return `${line.slice(0, cut)}…`;
}

/**
 * The subject of a decision's notice, '"ship" on decision approve of job #7':
 * the choice and the decision's name on one line and shortened, so any
 * choice (quotes, 200 characters) fits the notice's shape and the 200
 * characters a subject may have.
 */
export function decisionSubject(choice: string, name: string, jobId: string): string {
  return `"${shortLine(choice, 80)}" on decision ${shortLine(name, 60)} of job #${jobId}`;
}

export function notice(done: NoticeCode | undefined, subject: string | undefined): Html | '' {
  if (!done || subject === undefined || !SUBJECTS[done].test(subject)) return '';
  return html`<p class="notice" role="status">${NOTICES[done](subject)}</p>`;
}

export function table(headers: readonly { label: string; num?: boolean }[], rows: readonly HtmlValue[], caption: string): Html {
  return html`<div class="table-wrap"><table><caption class="visually-hidden">${caption}</caption><thead><tr>${headers.map(
    (h) => html`<th scope="col"${h.num ? html` class="num"` : ''}>${h.label}</th>`,
  )}</tr></thead><tbody>${rows}</tbody></table></div>`;
}
