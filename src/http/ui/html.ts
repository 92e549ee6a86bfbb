// HTML built from templates that escape every interpolated value unless it
// is already Html, so nothing from the database or the request reaches the
// page unescaped. Attribute values are always written inside double quotes.

/** Markup that is safe to insert as it is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

/** A value in a template: Html as it is, arrays joined, nothing for null, undefined and false, anything else escaped. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

/**
 * Bidirectional formatting characters: an override (U+202E) in a stored
 * value reversed the page's own words after it ("refund of <RLO>$001
 * approved; dedupe order-1234" read "... 4321-redro epuded"). In text they
 * are shown escaped, `\u202e`, as the CLI shows them; in an attribute (a
 * form's hidden field posts the value back) they are kept.
 */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const BIDI_ALL = new RegExp(BIDI.source, 'g');

function shownBidi(text: string): string {
  return text.replace(BIDI_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Whether markup ends inside a tag (a value after it is an attribute's). Templates never put a raw `<` or `>` in a value. */
function insideTag(markup: string): boolean {
  return markup.lastIndexOf('<') > markup.lastIndexOf('>');
}

/** `v` as markup; `before`, the markup it follows, tells text from an attribute (read only for text holding a bidirectional character). */
function render(v: HtmlValue, before = ''): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map((x) => render(x, before)).join('');
  if (v === null || v === undefined || v === false) return '';
  const text = escapeHtml(String(v));
  return BIDI.test(text) && !insideTag(before) ? shownBidi(text) : text;
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!, out) + strings[i + 1]!;
  return new Html(out);
}

/** Joins parts into one Html. */
export function join(parts: readonly HtmlValue[], separator = ''): Html {
  return new Html(parts.map((p) => render(p)).join(render(separator)));
}
