// The Decisions view: what waits for people — each open decision of an
// unfinished job (job, name, prompt, choices, since, timeout), oldest
// first. A viewer holding `decide` gets a form per decision: a button per
// choice and an optional comment (a textarea: Enter in a one-line input
// submitted the form with its first button, recording a choice nobody
// picked); it posts to the dashboard's decide action
// (client.decide, as POST /jobs/:id/decisions/:name), which records the
// session's token name as `by`. Others see the list without buttons.
import type { PendingDecision } from '../../../db/protocol.js';
import { DECISIONS_SHOWN, type DecisionsData } from '../data/decisionsData.js';
import { relative, time } from '../format.js';
import { html, join, type Html } from '../html.js';
import type { Page } from '../layout.js';
import { can, type Viewer } from '../uiEnv.js';
import { notice, pathSegment, table } from './common.js';

/** The dashboard's path of a decision's action. */
export function decideAction(jobId: string, name: string): string {
  return `/ui/jobs/${jobId}/decisions/${pathSegment(name)}`;
}

function decideForm(p: PendingDecision, viewer: Viewer | null): Html | '' {
  if (!can(viewer, 'decide')) return '';
  const ref = `${p.jobId}-${encodeURIComponent(p.name)}`;
  const csrf = viewer!.csrf ? html`<input type="hidden" name="csrf" value="${viewer!.csrf}">` : '';
  const buttons = p.choices.map(
    (c) =>
      html`<button type="submit" name="choice" value="${c}" id="decide-${ref}-${encodeURIComponent(c)}">${c}<span class="visually-hidden"> on decision ${p.name} of job #${p.jobId}</span></button>`,
  );
  return html`<form class="decide" method="post" action="${decideAction(p.jobId, p.name)}">${csrf}<label for="comment-${ref}">Comment (optional)<textarea id="comment-${ref}" name="comment" maxlength="4000" rows="1" autocomplete="off"></textarea></label><div class="choices">${buttons}</div></form>`;
}

function row(p: PendingDecision, viewer: Viewer | null, nowMs: number, decide: boolean): Html {
  const when = (d: Date | null) => (d ? html`${time(d)}<br><span class="muted small">${relative(d, nowMs)}</span>` : 'never');
  return html`<tr data-decision="${p.jobId}/${p.name}"><td><a href="/ui/jobs/${p.jobId}">#${p.jobId}</a> <span class="muted small">${p.type} on ${p.queue}</span></td><td><code>${p.name}</code></td><td>${p.prompt ?? html`<span class="muted">·</span>`}</td><td>${join(
    p.choices.map((c) => html`<code>${c}</code>`),
    ', ',
  )}</td><td>${when(p.since)}</td><td>${when(p.timeoutAt)}</td>${decide ? html`<td>${decideForm(p, viewer)}</td>` : ''}</tr>`;
}

export function decisionsView(d: DecisionsData, viewer: Viewer | null): Page {
  const decide = can(viewer, 'decide');
  const headers = [{ label: 'job' }, { label: 'decision' }, { label: 'prompt' }, { label: 'choices' }, { label: 'since' }, { label: 'times out' }, ...(decide ? [{ label: 'decide' }] : [])];
  const job = d.query.job;
  const scope = job === undefined ? '' : html`<p id="decisions-job">The decisions job <a href="/ui/jobs/${job}">#${job}</a> waits for. <a href="/ui/decisions">All decisions →</a></p>`;
  const list = d.decisions.length
    ? html`${scope}${table(headers, d.decisions.map((p) => row(p, viewer, d.nowMs, decide)), 'Decisions waiting for people')}${
        job === undefined && d.decisions.length >= DECISIONS_SHOWN
          ? html`<p class="muted small">The oldest ${DECISIONS_SHOWN}; a job's own are on its Job view's link (Decide), and GET /decisions?limit= lists more.</p>`
          : ''
      }`
    : html`${scope}<p id="decisions-empty">${job === undefined ? 'No decision is waiting for people.' : 'This job waits for no decision now.'}</p>`;
  const who = decide ? '' : html`<p class="muted small" id="decisions-readonly">Deciding needs a token with the <code>decide</code> scope.</p>`;
  return {
    title: 'Decisions',
    nav: '/ui/decisions',
    liveMs: 5000,
    head: html`<h1>Decisions</h1><p class="lede">Jobs waiting for a person's choice (ctx.waitForDecision), oldest first. A choice is recorded with your token's name and the job resumes.</p>${notice(d.query.done, d.query.subject)}${who}`,
    live: list,
  };
}
