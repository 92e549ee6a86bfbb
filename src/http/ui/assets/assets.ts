// The dashboard's static files, shipped inside the package as strings (no
// file to copy into dist/ or a Lambda bundle, nothing fetched at run time):
// the script, the stylesheet and the icon, each with a content hash that
// goes into its URL, so browsers may cache them for a year and a new
// version is a new URL.
import { createHash } from 'node:crypto';
import { CHART_SCRIPT } from './chartScript.js';
import { CONFIRM_SCRIPT } from './confirmScript.js';
import { LIVE_SCRIPT } from './liveScript.js';
import { STYLESHEET } from './stylesheet.js';

export interface Asset {
  name: string;
  type: string;
  body: string;
  /** The first 12 hex digits of its SHA-256: part of its URL. */
  hash: string;
}

const SCRIPT = `(function () {\n'use strict';\n${CHART_SCRIPT}\n${LIVE_SCRIPT}\n${CONFIRM_SCRIPT}\ndrawCharts(document);\nstartLive();\nconfirmDanger();\n})();\n`;

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2933"/>' +
  '<path d="M7 9h4l2.5 10L16 11h0l2.5 8L21 9h4l-4.5 15h-4L16 17l-.5 7h-4z" fill="#fff"/></svg>';

function asset(name: string, type: string, body: string): Asset {
  return { name, type, body, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

export const ASSETS: Record<'script' | 'styles' | 'icon', Asset> = {
  script: asset('dashboard.js', 'text/javascript; charset=utf-8', SCRIPT),
  styles: asset('dashboard.css', 'text/css; charset=utf-8', STYLESHEET),
  icon: asset('icon.svg', 'image/svg+xml', ICON),
};

/** The URL a page links an asset by. */
export function assetUrl(a: Asset): string {
  return `/ui/assets/${a.name}?v=${a.hash}`;
}
