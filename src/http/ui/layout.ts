// The frame around every dashboard page: the header (namespace, the views,
// who is signed in and a sign-out button), a skip link, the page's static
// part, its live region (the part the script refreshes) and the live
// controls. The views listed in the header are NAV_VIEWS.
import { ASSETS, assetUrl } from './assets/assets.js';
import { html, type Html } from './html.js';
import type { Viewer } from './uiEnv.js';

export interface NavView {
  path: string;
  label: string;
}

export const NAV_VIEWS: readonly NavView[] = [
  { path: '/ui', label: 'Namespace' },
  { path: '/ui/queues', label: 'Queues' },
  { path: '/ui/workers', label: 'Workers' },
  { path: '/ui/schedules', label: 'Schedules' },
  { path: '/ui/decisions', label: 'Decisions' },
  { path: '/ui/alerts', label: 'Alerts' },
  { path: '/ui/outbox', label: 'Outbox' },
];

export interface Page {
  title: string;
  /** The nav entry this page belongs to. */
  nav: string;
  /** Above the live region: the heading, filters, anything a refresh must not reset. */
  head: Html;
  /** The part the script refreshes. */
  live: Html;
  /** How often the script refreshes it. */
  liveMs: number;
}

export interface Frame {
  namespace: string;
  viewer: Viewer | null;
}

export function signOutForm(viewer: Viewer | null): Html | '' {
  if (!viewer?.session || !viewer.csrf) return '';
  return html`<form method="post" action="/ui/sign-out"><input type="hidden" name="csrf" value="${viewer.csrf}"><button type="submit">Sign out</button></form>`;
}

export function document(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · workhorse</title>
<link rel="icon" type="image/svg+xml" href="${assetUrl(ASSETS.icon)}">
<link rel="stylesheet" href="${assetUrl(ASSETS.styles)}">
<script src="${assetUrl(ASSETS.script)}" defer></script>
</head><body>${body}</body></html>
`;
}

export function layout(page: Page, f: Frame): Html {
  const nav = NAV_VIEWS.map(
    (v) => html`<li><a href="${v.path}"${v.path === page.nav ? html` aria-current="page"` : ''}>${v.label}</a></li>`,
  );
  const who = f.viewer
    ? html`<div class="who"><span>${f.viewer.name} <span class="small">(${[...f.viewer.scopes].join(', ')})</span></span>${signOutForm(f.viewer)}</div>`
    : '';
  return document(
    page.title,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">workhorse</span><span class="ns">namespace <code>${f.namespace}</code></span>
<nav aria-label="Views"><ul>${nav}</ul></nav>${who}</header>
<main id="main">${page.head}
<div class="live-bar" id="live-bar" hidden><button type="button" id="live-toggle" aria-pressed="false">Pause live updates</button><span id="live-status">Live</span></div>
<div id="live" data-live-ms="${page.liveMs}">${page.live}</div>
</main>`,
  );
}
