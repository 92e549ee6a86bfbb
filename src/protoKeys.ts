// A payload key named `__proto__` cannot survive a job's schema: JSON.parse
// makes it an ordinary own key, but zod's records and loose objects copy
// keys by assignment, and assigning `__proto__` sets the copy's prototype
// instead, so the key and its value vanished from the stored payload while
// the enqueue answered 201. The boundaries refuse it, naming its path,
// before the schema runs.
import type { ValidationIssue } from './errors.js';
import { MAX_JSON_DEPTH } from './storable.js';

const PROTO_MESSAGE = 'must not be a key named "__proto__" (JavaScript objects take it as their prototype, so it would not be stored): rename it';

/** A value to visit, with the way back to the root (a path is built only for the one found). */
interface Visit {
  value: object;
  parent: Visit | undefined;
  key: string | number;
  depth: number;
}

function pathOf(v: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = v; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The path of the first own enumerable `__proto__` key in a JSON-like value,
 * or undefined. Values nested deeper than MAX_JSON_DEPTH are not visited:
 * such a payload is refused for its depth when it is encoded.
 */
export function protoKeyIssue(value: unknown): ValidationIssue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const seen = new Set<object>();
  const stack: Visit[] = [{ value, parent: undefined, key: '', depth: 1 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (seen.has(item.value) || item.depth > MAX_JSON_DEPTH) continue; // a cycle is refused when encoded, as is this depth
    seen.add(item.value);
    const o = item.value as Record<string, unknown>;
    // A getter or a proxy trap that throws is the value's problem, named at its place.
    let key: string | number | undefined;
    try {
      if (!Array.isArray(o) && Object.prototype.propertyIsEnumerable.call(o, '__proto__')) {
        return { path: [...pathOf(item), '__proto__'], message: PROTO_MESSAGE };
      }
      const keys: (string | number)[] = Array.isArray(o) ? o.map((_, i) => i) : Object.keys(o);
      for (let i = keys.length - 1; i >= 0; i--) {
        key = keys[i]!;
        const v = o[key];
        if (typeof v === 'object' && v !== null) stack.push({ value: v, parent: item, key, depth: item.depth + 1 });
      }
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { path: key === undefined ? pathOf(item) : [...pathOf(item), key], message: `reading it threw (${why}): pass plain data` };
    }
  }
  return undefined;
}
