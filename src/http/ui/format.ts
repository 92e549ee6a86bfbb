// How the dashboard writes times, durations and stored JSON: one style on
// every view. Times are UTC; durations and ages come from the database
// clock wherever the protocol computes them.
import { html, type Html } from './html.js';

const two = (big: number, bigUnit: string, small: number, smallUnit: string) => `${big} ${bigUnit}${small ? ` ${small} ${smallUnit}` : ''}`;

/** 850 ms, 12.3 s, 4 min 5 s, 1 min, 3 h 2 min, 2 d 4 h. */
export function duration(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)} ms`;
  if (a < 60_000) return `${(a / 1000).toFixed(1)} s`;
  const s = Math.floor(a / 1000);
  if (s < 3600) return two(Math.floor(s / 60), 'min', s % 60, 's');
  if (s < 86_400) return two(Math.floor(s / 3600), 'h', Math.floor((s % 3600) / 60), 'min');
  return two(Math.floor(s / 86_400), 'd', Math.floor((s % 86_400) / 3600), 'h');
}

/** A point in time as `<time>`: `2026-12-01 11:15:35 UTC`. */
export function time(d: Date | null | undefined): Html | string {
  if (!d) return '·';
  const iso = d.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}

/** How far a time is from `now`: "in 12.0 s" or "3 min 2 s ago". */
export function relative(d: Date, nowMs: number): string {
  const delta = d.getTime() - nowMs;
  return delta >= 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`;
}

/** Stored JSON shown on a page, cut at `maxChars` (a payload may be 256 KiB). */
export function prettyJson(value: unknown, maxChars = 32_768): { text: string; cut: boolean } {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return text.length > maxChars ? { text: text.slice(0, maxChars), cut: true } : { text, cut: false };
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}
