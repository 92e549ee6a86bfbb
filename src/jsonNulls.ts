// Values JSON.stringify writes as `null` without a word: NaN and ±Infinity
// (JSON has no such numbers; over HTTP a literal like 1e400 parses to
// Infinity), an invalid Date (its toJSON answers null), and an array item
// that is undefined, a function or a symbol (or whose toJSON answers one),
// or an empty slot of a sparse array. Likewise a Map or a Set that holds
// entries, which it writes as `{}`. A payload holding one would be stored as
// something other than what was given, so the boundaries refuse it, naming
// its path. Only encoded text that contains `null` or `{}` can hold one, so
// the walk runs only then. (An object's key whose value is undefined is left out of the JSON,
// as an optional field is meant to be, and is not refused.)
import type { ValidationIssue } from './errors.js';

const NON_FINITE = 'must be a finite number (JSON has no NaN or Infinity: it would be stored as null)';
const INVALID_DATE = 'must be a valid date (an invalid Date would be stored as null)';
const LOST_ENTRIES = 'must be a JSON value (a Map or a Set is written as {} and its entries would be lost: pass a plain object or an array)';
const NOT_JSON_ITEM = 'must be a JSON value (an array item that is undefined, a function or a symbol, or whose toJSON answers one, or an empty slot, would be stored as null)';

/** The first value of `value` that JSON.stringify wrote as something else (null, or {} for a Map or Set with entries), or undefined. */
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
    if ((v instanceof Map || v instanceof Set) && v.size > 0) return { path: item.path, message: LOST_ENTRIES };
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
