// Values JSON.stringify writes as `null` without a word: NaN and ±Infinity
// (JSON has no such numbers; over HTTP a literal like 1e400 parses to
// Infinity), an invalid Date (its toJSON answers null), and an array item
// that is undefined, a function or a symbol (or whose toJSON answers one),
// or an empty slot of a sparse array. Likewise a Map or a Set that holds
// entries, which it writes as `{}`, and any other object that is not a
// plain one and that JSON writes as `{}` (no own enumerable key, no
// toJSON): an Error, a RegExp, a Promise (a forgotten await), a WeakMap,
// an ArrayBuffer, Headers, a class instance keeping its data in private
// fields or getters. A payload holding one would be stored as
// something other than what was given, so the boundaries refuse it, naming
// its path. Only encoded text that contains `null` or `{}` can hold one, so
// the walk runs only then. (An object's key whose value is undefined is left out of the JSON,
// as an optional field is meant to be, and is not refused.)
import type { ValidationIssue } from './errors.js';

const NON_FINITE = 'must be a finite number (JSON has no NaN or Infinity: it would be stored as null)';
const INVALID_DATE = 'must be a valid date (an invalid Date would be stored as null)';
const LOST_ENTRIES = 'must be a JSON value (a Map or a Set is written as {} and its entries would be lost: pass a plain object or an array)';
const emptied = (name: string) =>
  `must be a JSON value (${name} is written as {} and what it holds would be lost${name === 'a Promise' ? ': a missing await?' : ': pass a plain object'})`;
const NOT_JSON_ITEM = 'must be a JSON value (an array item that is undefined, a function or a symbol, or whose toJSON answers one, or an empty slot, would be stored as null)';

/**
 * An object JSON writes as `{}` that is not a plain object: no own
 * enumerable key, and not a boxed primitive or an array (toJSON was applied
 * before this is asked). A plain `{}` and an object of a null prototype
 * are what they look like.
 */
function writtenEmpty(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) return false;
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return false;
  // An empty buffer or typed array holds nothing to lose.
  if ((ArrayBuffer.isView(v) || v instanceof ArrayBuffer) && v.byteLength === 0) return false;
  return Object.keys(v).length === 0;
}

/** `a Promise`, `an Error`, `a Headers`: what the caller passed, by its constructor's name. */
function describe(v: object): string {
  let name: unknown;
  try {
    if (typeof (v as { then?: unknown }).then === 'function') return 'a Promise';
    name = (v.constructor as { name?: unknown } | undefined)?.name;
  } catch {
    // A getter of the caller's that throws: described without its name.
  }
  const n = typeof name === 'string' && /^[A-Za-z_$][\w$]{0,63}$/.test(name) ? name : 'an object of a class';
  return n === 'an object of a class' ? n : `${/^[AEIOU]/.test(n) ? 'an' : 'a'} ${n}`;
}

/** The first value of `value` that JSON.stringify wrote as something else (null, or {} for a Map, a Set or another non-plain object), or undefined. */
export function silentNull(value: unknown, encoded: string): ValidationIssue | undefined {
  if (!encoded.includes('null') && !encoded.includes('{}')) return undefined;
  const stack: { value: unknown; key: string; path: (string | number)[]; inArray: boolean }[] = [{ value, key: '', path: [], inArray: false }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    let v = item.value;
    if (v instanceof Date && Number.isNaN(v.getTime())) return { path: item.path, message: INVALID_DATE };
    // The same steps JSON.stringify takes before it writes a value.
    if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON(k: string): unknown }).toJSON(item.key);
      // A toJSON answering nothing JSON holds: an array item becomes null (an object's key is left out).
      if (item.inArray && (v === undefined || typeof v === 'function' || typeof v === 'symbol')) return { path: item.path, message: NOT_JSON_ITEM };
    }
    if (v instanceof Map || v instanceof Set) {
      if (v.size > 0) return { path: item.path, message: LOST_ENTRIES };
    } else if (writtenEmpty(v)) {
      return { path: item.path, message: emptied(describe(v as object)) };
    }
    if (v instanceof Number) v = v.valueOf();
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { path: item.path, message: NON_FINITE };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const x: unknown = v[i];
        if (!(i in v) || x === undefined || typeof x === 'function' || typeof x === 'symbol') return { path: [...item.path, i], message: NOT_JSON_ITEM };
        stack.push({ value: x, key: String(i), path: [...item.path, i], inArray: true });
      }
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        stack.push({ value: (v as Record<string, unknown>)[k], key: k, path: [...item.path, k], inArray: false });
      }
    }
  }
  return undefined;
}
